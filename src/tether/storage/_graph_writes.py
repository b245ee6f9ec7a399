"""The statements of LangGraph's short writes (a step of a running graph, a thread's
first write), each with its rows of parameters, for a backend to run in one go: one
``executemany`` per statement on SQLite, one multi-statement query on PostgreSQL."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from tether import canonical
from tether.storage.langgraph_store import LangGraphStore
from tether.storage.rows import (
    AuditRow,
    GraphCheckpointPut,
    GraphEvent,
    GraphPut,
    GraphRunUpdate,
    GraphThreadStart,
    GraphWritesPut,
    NextEntry,
)
from tether.storage.stores import CoreStore
from tether.validation import check_params

Statements = list[tuple[str, list[dict[str, Any]]]]
"""Statements (text) in order, each with its rows of parameters."""


class _StartTransaction(LangGraphStore, CoreStore, Protocol):
    """What :func:`start_statements_txn` and :func:`finish_statements_txn` read with."""


StatementsTxn = Callable[..., "Statements | None"]
"""Makes a short write's statements in a write transaction: ``(txn, queries, ts_in,
tenant_id, ..., items)``, ``None`` when there is nothing to write."""


def step_statements_txn(
    txn: object,
    queries: Mapping[str, str],
    ts_in: Callable[[datetime], Any],
    tenant_id: str,
    items: Sequence[GraphPut],
) -> Statements:
    """A step of a running graph (see :func:`graph_statements`)."""
    return graph_statements(queries, tenant_id, items)


def checked_statements(statements: Statements) -> Statements:
    """``statements``, every row of parameters passed through the storage net."""
    for _, rows in statements:
        for params in rows:
            check_params(params)
    return statements


def start_statements_txn(
    txn: _StartTransaction,
    queries: Mapping[str, str],
    ts_in: Callable[[datetime], Any],
    tenant_id: str,
    start: GraphThreadStart,
    entry: NextEntry,
    items: Sequence[GraphPut],
) -> Statements | None:
    """In a write transaction: ``None`` if the thread exists, else the statements of
    :meth:`tether.storage.base.Storage.write_graph_start`. The audit head is locked before
    the thread is read, as every writer that starts a thread does, so they take turns."""
    seq, head = txn.lock_audit_head(tenant_id)
    if txn.get_graph_thread(tenant_id, start.thread_id) is not None:
        return None
    statements = graph_start_statements(queries, tenant_id, start, entry(seq, head), ts_in)
    return checked_statements(statements) + graph_statements(queries, tenant_id, items)


def graph_statements(
    queries: Mapping[str, str], tenant_id: str, items: Sequence[GraphPut]
) -> Statements:
    """The statements (text from ``queries``) that store ``items``, in order, each with
    its rows of parameters: a checkpoint's values (one statement for all of them), the
    checkpoint, a task's writes (one statement).

    Checked (:func:`check_graph_put`): what came from the graph, not the parameters the
    checkpointer made itself."""
    statements: Statements = []
    for item in items:
        check_graph_put(item)
        if isinstance(item, GraphWritesPut):
            sql = queries["upsert_graph_write" if item.replace else "insert_graph_write"]
            statements.append((sql, write_params(tenant_id, item)))
            continue
        if item.blobs:
            statements.append((queries["insert_graph_blob"], blob_params(tenant_id, item)))
        statements.append(
            (queries["upsert_graph_checkpoint"], [checkpoint_params(tenant_id, item)])
        )
    return statements


def check_graph_put(item: GraphPut) -> None:
    """The storage net (:func:`tether.validation.check_params`) over the values of
    ``item`` that come from the graph or its caller: ids, namespace, channel names,
    versions, task ids and paths, and the JSON written from the graph's bookkeeping and
    metadata. Left out, as the checkpointer made them: the tenant (the principal's), the
    serializer's type tags and bytes, write indexes, the version a list extends (one
    checked when stored) and the channels stored apart (checked once per set, see
    :func:`_channels_json`)."""
    if isinstance(item, GraphWritesPut):
        check_params(
            {
                "thread_id": item.thread_id,
                "checkpoint_ns": item.checkpoint_ns,
                "checkpoint_id": item.checkpoint_id,
            }
        )
        for write in item.writes:
            check_params(
                {"task_id": write.task_id, "channel": write.channel, "task_path": write.task_path}
            )
        return
    row = item.checkpoint
    check_params(
        {
            "thread_id": row.thread_id,
            "checkpoint_ns": row.checkpoint_ns,
            "checkpoint_id": row.checkpoint_id,
            "parent_checkpoint_id": row.parent_checkpoint_id,
            "graph_run_id": item.graph_run_id,
            "checkpoint": row.checkpoint_json,
            "metadata": row.metadata_json,
        }
    )
    for blob in item.blobs:
        check_params(
            {"checkpoint_ns": blob.checkpoint_ns, "channel": blob.channel, "version": blob.version}
        )


def graph_start_statements(
    queries: Mapping[str, str],
    tenant_id: str,
    start: GraphThreadStart,
    entry: AuditRow,
    ts_in: Callable[[datetime], Any],
) -> Statements:
    """The statements that start a thread (see :func:`thread_start_rows`) and append its
    audit entry ``entry``, moving the tenant's head to it; ``ts_in``: a timestamp as the
    driver takes it."""
    rows = thread_start_rows(tenant_id, start, ts_in)
    rows.append(
        (
            "insert_audit_entry",
            {
                "tenant_id": entry.tenant_id,
                "seq": entry.seq,
                "entry_id": entry.entry_id,
                "at": ts_in(entry.at),
                "actor_id": entry.actor_id,
                "action": entry.action,
                "target": entry.target,
                "details": entry.details_json,
                "subjects": entry.subjects_json,
                "prev_hash": entry.prev_hash,
                "entry_hash": entry.entry_hash,
            },
        )
    )
    rows.append(
        ("set_audit_head", {"tenant_id": tenant_id, "seq": entry.seq, "head": entry.entry_hash})
    )
    return [(queries[name], [params]) for name, params in rows]


def thread_start_rows(
    tenant_id: str, start: GraphThreadStart, ts_in: Callable[[datetime], Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The named queries that start a thread, with their parameters: its run row (only if
    the thread has none: the first returns a row when it wrote one), its thread row, the
    run's first event."""
    ids = {"tenant_id": tenant_id, "run_id": start.run_id}
    at = ts_in(start.at)
    run = {
        **ids,
        "thread_id": start.thread_id,
        "status": start.status,
        "created_at": at,
        "created_by": start.created_by,
    }
    event = GraphEvent(start.run_id, 1, start.at, start.event, "", {"thread_id": start.thread_id})
    return [
        ("insert_graph_thread_run", run),
        ("insert_graph_thread", {**ids, "thread_id": start.thread_id, "created_at": at}),
        ("insert_event", event_params(tenant_id, event, ts_in)),
    ]


def finish_statements_txn(
    txn: _StartTransaction,
    queries: Mapping[str, str],
    ts_in: Callable[[datetime], Any],
    tenant_id: str,
    update: GraphRunUpdate,
    event: GraphEvent,
    items: Sequence[GraphPut],
) -> Statements | None:
    """In a write transaction: ``None`` if the guarded update of the run row matched
    nothing (it was stale), else the statements of the rest of
    :meth:`tether.storage.base.Storage.write_graph_finish`."""
    if not txn.update_graph_run(tenant_id, update):
        return None
    statements = [(queries["insert_event"], [event_params(tenant_id, event, ts_in)])]
    return checked_statements(statements) + graph_statements(queries, tenant_id, items)


def run_update_params(
    tenant_id: str, update: GraphRunUpdate, ts_in: Callable[[datetime], Any]
) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "run_id": update.run_id,
        "status": update.status,
        "current_node": update.current_node,
        "steps": update.steps,
        "wait_id": update.wait_id,
        "error": update.error,
        "event_seq": update.event_seq,
        "updated_at": ts_in(update.updated_at),
        "updated_by": update.updated_by,
        "expected_event_seq": update.expected_event_seq,
    }


def event_params(
    tenant_id: str, event: GraphEvent, ts_in: Callable[[datetime], Any]
) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "run_id": event.run_id,
        "seq": event.seq,
        "at": ts_in(event.at),
        "type": event.type,
        "node": event.node or None,
        "duration_ms": None,
        "data": canonical.dumps(dict(event.data), trusted=True),
    }


def write_params(tenant_id: str, put: GraphWritesPut) -> list[dict[str, Any]]:
    thread_id, ns, checkpoint_id = put.thread_id, put.checkpoint_ns, put.checkpoint_id
    return [
        {
            "tenant_id": tenant_id,
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
            "task_id": write.task_id,
            "idx": write.idx,
            "channel": write.channel,
            "type": write.type,
            "data": write.data,
            "task_path": write.task_path,
        }
        for write in put.writes
    ]


def blob_params(tenant_id: str, put: GraphCheckpointPut) -> list[dict[str, Any]]:
    thread_id = put.checkpoint.thread_id
    return [
        {
            "tenant_id": tenant_id,
            "thread_id": thread_id,
            "checkpoint_ns": blob.checkpoint_ns,
            "channel": blob.channel,
            "version": blob.version,
            "type": blob.type,
            "data": blob.data,
            "base_version": blob.base_version,
            "keep": blob.keep,
        }
        for blob in put.blobs
    ]


def checkpoint_params(tenant_id: str, put: GraphCheckpointPut) -> dict[str, Any]:
    row = put.checkpoint
    return {
        "tenant_id": tenant_id,
        "thread_id": row.thread_id,
        "checkpoint_ns": row.checkpoint_ns,
        "checkpoint_id": row.checkpoint_id,
        "parent_checkpoint_id": row.parent_checkpoint_id,
        "graph_run_id": put.graph_run_id,
        "checkpoint": row.checkpoint_json,
        "metadata": row.metadata_json,
        "blob_channels": _channels_json(row.blob_channels),
        "inline_type": row.inline_type,
        "inline_data": row.inline_data,
    }


@functools.lru_cache(maxsize=256)
def _channels_json(channels: tuple[str, ...]) -> str:
    """The channels a checkpoint stores apart, as JSON (checked): a graph's checkpoints
    name the same few sets over and over."""
    return canonical.dumps(list(channels))
