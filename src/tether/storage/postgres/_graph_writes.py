"""LangGraph's short writes on PostgreSQL: each statement bound client-side and sent with
the others as one multi-statement query (see :mod:`tether.storage._graph_writes`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg import pq

from tether.clock import to_utc
from tether.errors import UnknownTenant
from tether.storage._graph_writes import (
    Statements,
    checked_statements,
    event_params,
    graph_start_statements,
    graph_statements,
    run_update_params,
)
from tether.storage._transaction import Row
from tether.storage.rows import GraphEvent, GraphPut, GraphRunUpdate, GraphThreadStart, NextEntry
from tether.validation import check_params

T_co = TypeVar("T_co", covariant=True)


class GraphWrite(Protocol[T_co]):
    """A write given a cursor, the statement that enters the tenant, the named queries
    and the tenant."""

    def __call__(
        self,
        cursor: psycopg.ClientCursor[Any],
        context: str,
        queries: Mapping[str, str],
        tenant_id: str,
    ) -> T_co: ...


def graph_step(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    queries: Mapping[str, str],
    tenant_id: str,
    *,
    items: Sequence[GraphPut],
) -> None:
    """A step of a running graph: one round trip."""
    statements = graph_statements(queries, tenant_id, items)
    cursor.execute(";\n".join([context, *_bound(cursor, statements)]))


def graph_start(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    queries: Mapping[str, str],
    tenant_id: str,
    *,
    start: GraphThreadStart,
    entry: NextEntry,
    items: Sequence[GraphPut],
) -> bool:
    """A new thread's first write: the audit head locked and the thread read in a
    transaction left open, then every statement and the commit (two round trips)."""
    ids = {"tenant_id": tenant_id, "thread_id": start.thread_id}
    # The head is locked first: each statement reads its own snapshot, so a thread read
    # after the lock sees a thread another writer committed while this one waited.
    reads = [queries["lock_audit_head"], queries["get_graph_thread"]]

    def writes(found: list[Row | None]) -> Statements | None:
        head, exists = found
        if head is None:
            raise UnknownTenant(f"tenant {tenant_id!r} does not exist")
        if exists is not None:
            return None
        made = entry(int(head["audit_seq"]), head["audit_head"])
        statements = graph_start_statements(queries, tenant_id, start, made, to_utc)
        return checked_statements(statements) + graph_statements(queries, tenant_id, items)

    return _read_then_write(cursor, context, [(sql, ids) for sql in reads], writes)


def graph_finish(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    queries: Mapping[str, str],
    tenant_id: str,
    *,
    update: GraphRunUpdate,
    event: GraphEvent,
    items: Sequence[GraphPut],
) -> bool:
    """A thread's last write: the guarded update of its run row in a transaction left
    open, then the event, every statement and the commit (two round trips)."""
    guard = [(queries["update_graph_run"], run_update_params(tenant_id, update, to_utc))]

    def writes(found: list[Row | None]) -> Statements | None:
        if found[0] is None:
            return None
        statements = [(queries["insert_event"], [event_params(tenant_id, event, to_utc)])]
        return checked_statements(statements) + graph_statements(queries, tenant_id, items)

    return _read_then_write(cursor, context, guard, writes)


def graph_read(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    queries: Mapping[str, str],
    tenant_id: str,
    *,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str | None,
) -> tuple[Row, list[Row]] | None:
    """A checkpoint (the namespace's latest without ``checkpoint_id``) and its pending
    writes, read in one snapshot and one round trip (``None``: no such checkpoint)."""
    ids = {"tenant_id": tenant_id, "thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
    if checkpoint_id is None:
        reads = [(queries["latest_graph_checkpoint"], ids)]
        reads.append((queries["list_latest_graph_writes"], ids))
    else:
        exact = {**ids, "checkpoint_id": checkpoint_id}
        reads = [(queries["get_graph_checkpoint"], exact), (queries["list_graph_writes"], exact)]
    check_params(reads[0][1])
    try:
        cursor.execute(
            ";\n".join(
                [
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                    context,
                    *(cursor.mogrify(_statement(sql), p) for sql, p in reads),
                    "COMMIT",
                ]
            )
        )
        cursor.nextset()  # past BEGIN
        cursor.nextset()  # past the context
        checkpoint = cursor.fetchone()
        cursor.nextset()
        writes = cursor.fetchall()
    except BaseException:
        _roll_back(cursor)
        raise
    return None if checkpoint is None else (checkpoint, writes)


def _roll_back(cursor: psycopg.ClientCursor[Any]) -> None:
    """After an error: end the transaction the failed query left open, if any."""
    if cursor.connection.info.transaction_status != pq.TransactionStatus.IDLE:
        with suppress(psycopg.Error):
            cursor.execute("ROLLBACK")


def _read_then_write(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    reads: Sequence[tuple[str, Mapping[str, Any]]],
    writes: Callable[[list[Row | None]], Statements | None],
) -> bool:
    """One round trip: open a transaction, enter the tenant, run ``reads``; a second: the
    statements ``writes`` makes of their first rows (checked there), and the commit
    (``None``: roll back, nothing written)."""
    try:
        cursor.execute(
            ";\n".join(
                ["BEGIN", context, *(cursor.mogrify(_statement(sql), p) for sql, p in reads)]
            )
        )
        cursor.nextset()  # past BEGIN
        found: list[Row | None] = []
        for _ in reads:
            cursor.nextset()
            found.append(cursor.fetchone())
        statements = writes(found)
        if statements is None:
            cursor.execute("ROLLBACK")
            return False
        cursor.execute(";\n".join([*_bound(cursor, statements), "COMMIT"]))
    except BaseException:
        _roll_back(cursor)
        raise
    return True


def _bound(cursor: psycopg.ClientCursor[Any], statements: Statements) -> list[str]:
    return [cursor.mogrify(_statement(sql), params) for sql, rows in statements for params in rows]


def _statement(sql: str) -> str:
    """A named query without its closing semicolon, to join with others into one."""
    return sql.rstrip().rstrip(";")
