"""The storage contract of the ``langgraph`` component (the others are in
:mod:`tether.storage.stores`): LangGraph threads and LangGraph's key-value store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from tether.storage.rows import (
    GraphBlobRow,
    GraphCheckpointRow,
    GraphEvent,
    GraphRunUpdate,
    GraphThreadRow,
    GraphThreadStart,
    GraphWriteRow,
    GraphWriteSummaryRow,
    StoreItemRow,
)


class LangGraphStore(Protocol):
    """LangGraph threads checkpointed by Tether (each thread's run row, its checkpoints,
    channel values and pending writes) and the items of LangGraph's key-value store."""

    def get_graph_thread(self, tenant_id: str, thread_id: str) -> GraphThreadRow | None: ...
    def start_graph_thread(self, tenant_id: str, start: GraphThreadStart) -> bool:
        """Create the thread's run row, thread row and first event unless the thread
        exists (then nothing is written); whether it was created. The tenant's audit head
        is locked first, so writers starting one thread at once take turns and the later
        one finds the thread."""
        ...

    def insert_graph_event(self, tenant_id: str, event: GraphEvent) -> None: ...
    def graph_thread_of_run(self, tenant_id: str, run_id: str) -> str | None: ...
    def update_graph_run(self, tenant_id: str, update: GraphRunUpdate) -> bool: ...
    def forget_run_retained(self, tenant_id: str, run_id: str) -> None:
        """Let retention compact the run again (a compacted thread that runs again)."""
        ...

    def put_graph_checkpoint(
        self,
        tenant_id: str,
        row: GraphCheckpointRow,
        *,
        graph_run_id: str | None,
        blobs: Sequence[GraphBlobRow],
    ) -> None: ...
    def put_graph_writes(
        self,
        tenant_id: str,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        writes: Sequence[GraphWriteRow],
        *,
        replace: bool,
    ) -> None: ...
    def get_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> GraphCheckpointRow | None: ...
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
    ) -> list[GraphCheckpointRow]: ...
    def graph_blob_chain(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, channel: str, version: str
    ) -> list[GraphBlobRow]: ...
    def list_graph_writes(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str
    ) -> list[GraphWriteRow]: ...
    def list_graph_thread_writes(
        self, tenant_id: str, thread_id: str
    ) -> list[GraphWriteSummaryRow]: ...
    def delete_graph_thread(self, tenant_id: str, thread_id: str) -> str | None: ...
    def list_graph_checkpoints_of_run(
        self, tenant_id: str, graph_run_id: str
    ) -> list[tuple[str, str, str]]: ...
    def delete_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str
    ) -> None: ...
    def copy_graph_thread(self, tenant_id: str, thread_id: str, target_thread_id: str) -> None: ...
    def prune_graph_checkpoints(self, tenant_id: str, thread_id: str) -> None: ...
    def list_graph_thread_checkpoints(
        self, tenant_id: str, thread_id: str
    ) -> list[tuple[str, str, tuple[str, ...]]]: ...
    def list_graph_blob_links(
        self, tenant_id: str, thread_id: str
    ) -> list[tuple[tuple[str, str, str], str | None]]: ...
    def delete_graph_blobs(
        self, tenant_id: str, thread_id: str, keys: Sequence[tuple[str, str, str]]
    ) -> None: ...
    def get_store_item(self, tenant_id: str, namespace: str, key: str) -> StoreItemRow | None: ...
    def get_store_item_by_memory(self, tenant_id: str, memory_id: str) -> StoreItemRow | None: ...
    def upsert_store_item(self, tenant_id: str, row: StoreItemRow) -> None: ...
    def delete_store_item(self, tenant_id: str, namespace: str, key: str) -> bool: ...
    def list_store_items(
        self, tenant_id: str, namespace: str, *, now: datetime, limit: int, offset: int
    ) -> list[StoreItemRow]: ...
    def list_store_namespaces(self, tenant_id: str, *, now: datetime) -> list[str]: ...
    def refresh_store_item(
        self, tenant_id: str, namespace: str, key: str, *, expires_at: datetime
    ) -> None: ...
    def list_expired_store_items(
        self, tenant_id: str, *, now: datetime, limit: int
    ) -> list[tuple[str, str, str | None]]: ...
