"""Typed storage operations of LangGraph threads (checkpoints, channel values, pending
writes, each thread's run row) and of LangGraph's key-value store, written once over
named queries."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tether import canonical
from tether.storage._graph_writes import (
    blob_params,
    checkpoint_params,
    event_params,
    run_update_params,
    thread_start_rows,
    write_params,
)
from tether.storage._transaction import QueryTransaction, Row
from tether.storage.rows import (
    GraphBlobRow,
    GraphCheckpointPut,
    GraphCheckpointRow,
    GraphEvent,
    GraphRunUpdate,
    GraphThreadRow,
    GraphThreadStart,
    GraphWriteRow,
    GraphWritesPut,
    GraphWriteSummaryRow,
    StoreItemRow,
)

BlobKey = tuple[str, str, str]
"""A channel value's place in a thread: (checkpoint namespace, channel, version)."""


class LangGraphOps(QueryTransaction):
    @abstractmethod
    def _fetch_many(self, name: str, params: Sequence[Mapping[str, Any]]) -> None: ...

    # -- threads and their run rows --------------------------------------------------------

    def get_graph_thread(self, tenant_id: str, thread_id: str) -> GraphThreadRow | None:
        row = self._one("get_graph_thread", tenant_id=tenant_id, thread_id=thread_id)
        if row is None:
            return None
        return GraphThreadRow(
            run_id=row["run_id"],
            status=row["status"],
            event_seq=int(row["event_seq"]),
            updated_at=self._ts_out(row["updated_at"]),
        )

    def start_graph_thread(self, tenant_id: str, start: GraphThreadStart) -> bool:
        """Create a thread's run row, its thread row and the run's first event, unless the
        thread exists (nothing written); whether it was created.

        The tenant's audit head is locked before the thread is looked for, as by
        :meth:`tether.storage.base.Storage.write_graph_start`: writers starting one thread
        at once take turns, and the later one, whose statements each read what was
        committed before them, finds the thread instead of failing on its key (or
        deadlocking on the tenant row its run row refers to)."""
        self.lock_audit_head(tenant_id)
        (_, run), *rest = thread_start_rows(tenant_id, start, self._ts_in)
        if not self._fetch("insert_graph_thread_run", run):
            return False
        for name, params in rest:
            self._fetch(name, params)
        return True

    def insert_graph_event(self, tenant_id: str, event: GraphEvent) -> None:
        self._fetch("insert_event", event_params(tenant_id, event, self._ts_in))

    def graph_thread_of_run(self, tenant_id: str, run_id: str) -> str | None:
        row = self._one("list_graph_threads_by_run", tenant_id=tenant_id, run_id=run_id)
        return str(row["thread_id"]) if row else None

    def update_graph_run(self, tenant_id: str, update: GraphRunUpdate) -> bool:
        return bool(
            self._fetch("update_graph_run", run_update_params(tenant_id, update, self._ts_in))
        )

    def forget_run_retained(self, tenant_id: str, run_id: str) -> None:
        self._fetch("delete_run_retained", {"tenant_id": tenant_id, "run_id": run_id})

    # -- checkpoints, channel values, writes -----------------------------------------------

    def put_graph_checkpoint(
        self,
        tenant_id: str,
        row: GraphCheckpointRow,
        *,
        graph_run_id: str | None,
        blobs: Sequence[GraphBlobRow],
    ) -> None:
        """Store the checkpoint (replacing one with its id) and the channel values it
        introduces; a value already stored at its version is kept."""
        put = GraphCheckpointPut(row, blobs, graph_run_id)
        if blobs:
            self._fetch_many("insert_graph_blob", blob_params(tenant_id, put))
        self._fetch_many("upsert_graph_checkpoint", [checkpoint_params(tenant_id, put)])

    def put_graph_writes(
        self,
        tenant_id: str,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        writes: Sequence[GraphWriteRow],
        *,
        replace: bool,
    ) -> None:
        """Store a task's writes; an existing (task, index) is kept unless ``replace``."""
        put = GraphWritesPut(thread_id, checkpoint_ns, checkpoint_id, writes, replace)
        self._fetch_many(
            "upsert_graph_write" if replace else "insert_graph_write", write_params(tenant_id, put)
        )

    def get_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> GraphCheckpointRow | None:
        """The checkpoint ``checkpoint_id``, or the namespace's latest without one."""
        ids = {"tenant_id": tenant_id, "thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        if checkpoint_id is None:
            row = self._one("latest_graph_checkpoint", **ids)
        else:
            row = self._one("get_graph_checkpoint", **ids, checkpoint_id=checkpoint_id)
        return checkpoint_row(row) if row else None

    def list_graph_checkpoints(
        self,
        tenant_id: str,
        *,
        thread_id: str | None,
        checkpoint_ns: str | None,
        checkpoint_id: str | None,
        before: str | None,
        filter_json: str,
        limit: int,
    ) -> list[GraphCheckpointRow]:
        rows = self._fetch(
            "list_graph_checkpoints",
            {
                "tenant_id": tenant_id,
                "thread_id": thread_id or "",
                "any_ns": 1 if checkpoint_ns is None else 0,
                "checkpoint_ns": checkpoint_ns or "",
                "checkpoint_id": checkpoint_id or "",
                "before": before or "",
                "filter": filter_json,
                "limit": limit,
            },
        )
        return [checkpoint_row(row) for row in rows]

    def graph_blob_chain(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, channel: str, version: str
    ) -> list[GraphBlobRow]:
        """The rows that make a channel's value at ``version``: its own first, then each
        row it extends (empty if the value is not stored)."""
        rows = self._fetch(
            "graph_blob_chain",
            {
                "tenant_id": tenant_id,
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "channel": channel,
                "version": version,
            },
        )
        return [
            GraphBlobRow(
                checkpoint_ns=checkpoint_ns,
                channel=channel,
                version=row["version"],
                type=row["type"],
                data=_bytes(row["data"]),
                base_version=row["base_version"],
                keep=None if row["keep"] is None else int(row["keep"]),
            )
            for row in rows
        ]

    def list_graph_writes(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str
    ) -> list[GraphWriteRow]:
        """A checkpoint's pending writes, in the order live execution applies them."""
        rows = self._fetch(
            "list_graph_writes",
            {
                "tenant_id": tenant_id,
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint_id,
            },
        )
        return graph_write_rows(rows)

    def list_graph_thread_writes(
        self, tenant_id: str, thread_id: str
    ) -> list[GraphWriteSummaryRow]:
        """Every pending write of the thread, by checkpoint, without the values."""
        rows = self._fetch(
            "list_graph_thread_writes", {"tenant_id": tenant_id, "thread_id": thread_id}
        )
        return [
            GraphWriteSummaryRow(
                checkpoint_ns=row["checkpoint_ns"],
                checkpoint_id=row["checkpoint_id"],
                task_id=row["task_id"],
                idx=int(row["idx"]),
                channel=row["channel"],
                type=row["type"],
                size=int(row["size"] or 0),
                task_path=row["task_path"],
            )
            for row in rows
        ]

    # -- deleting, copying, pruning --------------------------------------------------------

    def delete_graph_thread(self, tenant_id: str, thread_id: str) -> str | None:
        """Delete every checkpoint, value and write of the thread; its run id, if any."""
        ids = {"tenant_id": tenant_id, "thread_id": thread_id}
        self._fetch("delete_graph_thread_writes", ids)
        self._fetch("delete_graph_thread_blobs", ids)
        self._fetch("delete_graph_thread_checkpoints", ids)
        row = self._one("delete_graph_thread_row", **ids)
        return str(row["run_id"]) if row else None

    def list_graph_checkpoints_of_run(self, tenant_id: str, graph_run_id: str) -> list[BlobKey]:
        """(thread, namespace, checkpoint id) of every checkpoint a LangGraph run wrote."""
        rows = self._fetch(
            "list_graph_checkpoints_of_run",
            {"tenant_id": tenant_id, "graph_run_id": graph_run_id},
        )
        return [(row["thread_id"], row["checkpoint_ns"], row["checkpoint_id"]) for row in rows]

    def delete_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str
    ) -> None:
        """Delete one checkpoint and its pending writes (the values stay; see
        :meth:`delete_graph_blobs`)."""
        ids = {
            "tenant_id": tenant_id,
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
        self._fetch("delete_graph_checkpoint_writes", ids)
        self._fetch("delete_graph_checkpoint", ids)

    def copy_graph_thread(self, tenant_id: str, thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, value and write of a thread to another (which exists)."""
        ids = {"tenant_id": tenant_id, "thread_id": thread_id, "target_thread_id": target_thread_id}
        self._fetch("copy_graph_checkpoints", ids)
        self._fetch("copy_graph_blobs", ids)
        self._fetch("copy_graph_writes", ids)

    def prune_graph_checkpoints(self, tenant_id: str, thread_id: str) -> None:
        """Keep only the latest checkpoint of each namespace of the thread, with its
        writes (the values stay; see :meth:`delete_graph_blobs`)."""
        ids = {"tenant_id": tenant_id, "thread_id": thread_id}
        self._fetch("delete_graph_checkpoints_but_latest", ids)
        self._fetch("delete_graph_writes_without_checkpoint", ids)

    def list_graph_thread_checkpoints(
        self, tenant_id: str, thread_id: str
    ) -> list[tuple[str, str, tuple[str, ...]]]:
        """(namespace, checkpoint JSON, channels stored apart) of every checkpoint of the
        thread."""
        rows = self._fetch(
            "list_graph_thread_checkpoints", {"tenant_id": tenant_id, "thread_id": thread_id}
        )
        return [
            (row["checkpoint_ns"], row["checkpoint"], tuple(canonical.loads(row["blob_channels"])))
            for row in rows
        ]

    def list_graph_blob_links(
        self, tenant_id: str, thread_id: str
    ) -> list[tuple[BlobKey, str | None]]:
        """Every stored value of the thread and the version it extends, if any."""
        rows = self._fetch(
            "list_graph_blob_links", {"tenant_id": tenant_id, "thread_id": thread_id}
        )
        return [
            ((row["checkpoint_ns"], row["channel"], row["version"]), row["base_version"])
            for row in rows
        ]

    def delete_graph_blobs(self, tenant_id: str, thread_id: str, keys: Sequence[BlobKey]) -> None:
        if keys:
            self._fetch_many(
                "delete_graph_blob",
                [
                    {
                        "tenant_id": tenant_id,
                        "thread_id": thread_id,
                        "checkpoint_ns": ns,
                        "channel": channel,
                        "version": version,
                    }
                    for ns, channel, version in keys
                ],
            )

    # -- the key-value store ---------------------------------------------------------------

    def get_store_item(self, tenant_id: str, namespace: str, key: str) -> StoreItemRow | None:
        row = self._one("get_store_item", tenant_id=tenant_id, namespace=namespace, key=key)
        return self._store_item(row) if row else None

    def get_store_item_by_memory(self, tenant_id: str, memory_id: str) -> StoreItemRow | None:
        row = self._one("get_store_item_by_memory", tenant_id=tenant_id, memory_id=memory_id)
        return self._store_item(row) if row else None

    def upsert_store_item(self, tenant_id: str, row: StoreItemRow) -> None:
        self._fetch(
            "upsert_store_item",
            {
                "tenant_id": tenant_id,
                "namespace": row.namespace,
                "key": row.key,
                "memory_id": row.memory_id,
                "value": row.value_json,
                "vector": row.vector,
                "created_at": self._ts_in(row.created_at),
                "updated_at": self._ts_in(row.updated_at),
                "ttl_minutes": row.ttl_minutes,
                "expires_at": None if row.expires_at is None else self._ts_in(row.expires_at),
            },
        )

    def delete_store_item(self, tenant_id: str, namespace: str, key: str) -> bool:
        rows = self._fetch(
            "delete_store_item", {"tenant_id": tenant_id, "namespace": namespace, "key": key}
        )
        return bool(rows)

    def list_store_items(
        self, tenant_id: str, namespace: str, *, now: datetime, limit: int, offset: int
    ) -> list[StoreItemRow]:
        """Live items in ``namespace`` or below it (``""``: every namespace), newest first."""
        rows = self._fetch(
            "list_store_items",
            {
                "tenant_id": tenant_id,
                "namespace": namespace,
                "below": f"{namespace}.",
                "now": self._ts_in(now),
                "limit": limit,
                "offset": offset,
            },
        )
        return [self._store_item(row) for row in rows]

    def list_store_namespaces(self, tenant_id: str, *, now: datetime) -> list[str]:
        rows = self._fetch(
            "list_store_namespaces", {"tenant_id": tenant_id, "now": self._ts_in(now)}
        )
        return [row["namespace"] for row in rows]

    def refresh_store_item(
        self, tenant_id: str, namespace: str, key: str, *, expires_at: datetime
    ) -> None:
        self._fetch(
            "refresh_store_item",
            {
                "tenant_id": tenant_id,
                "namespace": namespace,
                "key": key,
                "expires_at": self._ts_in(expires_at),
            },
        )

    def list_expired_store_items(
        self, tenant_id: str, *, now: datetime, limit: int
    ) -> list[tuple[str, str, str | None]]:
        """(namespace, key, memory id) of items whose time to live ran out."""
        rows = self._fetch(
            "list_expired_store_items",
            {"tenant_id": tenant_id, "now": self._ts_in(now), "limit": limit},
        )
        return [(row["namespace"], row["key"], row["memory_id"]) for row in rows]

    def _store_item(self, row: Row) -> StoreItemRow:
        ttl = row["ttl_minutes"]
        return StoreItemRow(
            namespace=row["namespace"],
            key=row["key"],
            memory_id=row["memory_id"],
            value_json=row["value"],
            vector=_bytes(row["vector"]),
            created_at=self._ts_out(row["created_at"]),
            updated_at=self._ts_out(row["updated_at"]),
            ttl_minutes=None if ttl is None else float(ttl),
            expires_at=None if row["expires_at"] is None else self._ts_out(row["expires_at"]),
        )


def graph_write_rows(rows: Sequence[Row]) -> list[GraphWriteRow]:
    """Rows of ``list_graph_writes`` as :class:`GraphWriteRow` values."""
    return [
        GraphWriteRow(
            task_id=row["task_id"],
            idx=int(row["idx"]),
            channel=row["channel"],
            type=row["type"],
            data=_bytes(row["data"]),
            task_path=row["task_path"],
        )
        for row in rows
    ]


def checkpoint_row(row: Row) -> GraphCheckpointRow:
    """A row of ``get_graph_checkpoint`` as a :class:`GraphCheckpointRow`."""
    return GraphCheckpointRow(
        thread_id=row["thread_id"],
        checkpoint_ns=row["checkpoint_ns"],
        checkpoint_id=row["checkpoint_id"],
        parent_checkpoint_id=row["parent_checkpoint_id"],
        checkpoint_json=row["checkpoint"],
        metadata_json=row["metadata"],
        blob_channels=tuple(canonical.loads(row["blob_channels"])),
        inline_type=row["inline_type"],
        inline_data=_bytes(row["inline_data"]),
    )


def _bytes(value: Any) -> bytes | None:
    """A BLOB or bytea column as ``bytes`` (psycopg may hand back a ``memoryview``)."""
    return None if value is None else bytes(value)
