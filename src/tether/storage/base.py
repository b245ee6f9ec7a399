"""The storage boundary between Tether's logic and a database.

Logic layers (``runs/``, ``memory/``, ``audit/`` …) call the operations of an open
:class:`Transaction` and never see SQL. A transaction is opened *for a tenant*
(:meth:`Storage.transaction`) or, for cross-tenant maintenance only, as the system
(:meth:`Storage.system_transaction`). :class:`Transaction` combines the protocol of each
component (:mod:`tether.storage.stores`); the rows crossing the boundary are in
:mod:`tether.storage.rows`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Literal, Protocol

from tether.keys import Keyring
from tether.storage.langgraph_store import LangGraphStore
from tether.storage.rows import (
    AppliedMigration,
    AuditRow,
    ComponentVersion,
    GraphCheckpointRow,
    GraphEvent,
    GraphPut,
    GraphRunUpdate,
    GraphThreadStart,
    GraphWriteRow,
    MemoryCandidate,
    MemoryDecisionRow,
    MemoryHoldRow,
    MemoryRecallRow,
    MemoryTombstoneRow,
    NextEntry,
    PrincipalRow,
    ProcedureVersionRow,
    StepWrite,
    TenantRow,
    TextMatch,
    WorkingRow,
)
from tether.storage.stores import (
    CoreStore,
    MemoryStore,
    OperationsStore,
    ProcedureStore,
    RunStore,
    ThreadStore,
    WebhookStore,
    WorkingStore,
)


class Transaction(
    CoreStore,
    RunStore,
    MemoryStore,
    WorkingStore,
    ThreadStore,
    ProcedureStore,
    OperationsStore,
    WebhookStore,
    LangGraphStore,
    Protocol,
):
    """Every typed operation inside one open transaction: the contract of each component
    together. Functions taking one end in ``_txn``."""


class Wakeups(Protocol):
    """What an idle worker sleeps on: it returns early when work may have become runnable.

    A wake-up is a hint, never a promise (the worker still looks for work, and sleeps no
    longer than its poll interval without one), so a lost notification costs only latency.
    """

    def wait(self, timeout_s: float) -> bool:
        """Sleep up to ``timeout_s``; ``True`` if woken (something may be runnable)."""
        ...

    def close(self) -> None: ...


class Storage(Protocol):
    """A database Tether can persist to. Implementations: SQLite and PostgreSQL."""

    @property
    def backend(self) -> Literal["sqlite", "postgres"]: ...

    @property
    def display_url(self) -> str:
        """The URL with any password hidden, for messages."""
        ...

    def transaction(
        self, tenant_id: str, *, write: bool = True
    ) -> AbstractContextManager[Transaction]:
        """Open a transaction confined to ``tenant_id``; commits on success."""
        ...

    def system_transaction(self, *, write: bool = True) -> AbstractContextManager[Transaction]:
        """Open a cross-tenant transaction, for maintenance only."""
        ...

    def migrate(self) -> list[AppliedMigration]:
        """Apply every pending migration, in order; return what was applied.

        PostgreSQL also stores the tenant-context key of the keys in use (see
        :meth:`use_keys`) where only the migrating role can read it.
        """
        ...

    def use_keys(self, keyring: Keyring) -> None:
        """Use ``keyring`` from now on (PostgreSQL signs each tenant transaction with it)."""
        ...

    def check_keys(self) -> None:
        """Raise :class:`~tether.errors.ConfigError` unless the database was migrated with
        these keys (PostgreSQL; nothing to check on SQLite)."""
        ...

    def write_step(self, write: StepWrite) -> tuple[int, bool]:
        """Commit one durable step: the run row (only if still at ``expected_version`` and
        leased to ``expected_owner``), then its journal entries, checkpoint, waits and events.

        Alone, one commit on SQLite and one round trip on PostgreSQL; steps that other
        threads of the process write at the same moment share that commit (see
        :mod:`tether.storage._group_commit`), each under its own guard. Returns only once
        the commit holding the step has returned: the run's new version and whether
        cancellation has been requested.

        Raises:
            LeaseLost: the run moved on under another writer; nothing was written.
            RunCancelled: cancellation was requested and ``write.cancellable``; nothing
                was written.
        """
        ...

    def read_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> tuple[GraphCheckpointRow, list[GraphWriteRow]] | None:
        """A LangGraph checkpoint (the namespace's latest without ``checkpoint_id``) and
        its pending writes, in the order live execution applies them, read in one
        snapshot (``None``: no such checkpoint). One round trip on PostgreSQL."""
        ...

    def write_graph_step(self, tenant_id: str, items: Sequence[GraphPut]) -> None:
        """Store checkpoints and pending writes of LangGraph threads, in order, in one
        transaction: a step of a running graph, whose run row needs no change. One commit
        on SQLite, one round trip on PostgreSQL."""
        ...

    def write_graph_start(
        self, tenant_id: str, start: GraphThreadStart, entry: NextEntry, items: Sequence[GraphPut]
    ) -> bool:
        """A new thread's first write, in one transaction: unless the thread exists
        (``False``, nothing written), its run row, thread row and first event
        (``start``), the audit entry ``entry(seq, head)`` makes from the tenant's audit
        head (locked), the head moved to it, and ``items`` as :meth:`write_graph_step`
        stores them. One commit on SQLite, two round trips on PostgreSQL."""
        ...

    def write_graph_finish(
        self, tenant_id: str, update: GraphRunUpdate, event: GraphEvent, items: Sequence[GraphPut]
    ) -> bool:
        """A thread's last write, in one transaction: the guarded ``update`` of its run row
        (``False``, nothing written, if the row gained an event since), the ``event`` of
        its new status, and ``items`` as :meth:`write_graph_step` stores them. One commit
        on SQLite, two round trips on PostgreSQL."""
        ...

    def wakeups(self) -> Wakeups:
        """A new wake-up source for one idle worker (close it when the worker stops).

        PostgreSQL: ``LISTEN tether_runs``, notified by a trigger when a run becomes
        queued or scheduled or leaves ``running``. SQLite, which has no notifications
        between processes: ``PRAGMA data_version`` checked every few milliseconds, which
        changes when any other connection commits to the file.
        """
        ...

    def schema_status(self) -> list[ComponentVersion]: ...

    def check_schema(self) -> None:
        """Raise unless the database is exactly at the schema this code knows."""
        ...

    def compact_after_erasure(self) -> None:
        """Make erased data unrecoverable from the database files, not only the tables.

        Call it after an erasure has committed. SQLite rewrites the full-text index
        (``optimize``) and truncates the WAL, waiting for readers to let go of it.
        PostgreSQL rewrites the memory and thread tables with ``VACUUM FULL`` (heap, TOAST
        and indexes), again while another transaction still sees the erased rows; it
        locks those tables for every tenant while it runs and needs the login role to
        own them.

        Raises:
            StorageUnavailable: a reader kept the erased bytes in use past the deadline;
                the erasure stays committed, run it again once the reader is gone.
            PermissionDenied: (PostgreSQL) the login role may not rewrite the tables.
        """
        ...

    def reclaim_run_space(self) -> None:
        """Give the space of deleted run rows back to the file system, after ``gc``.

        SQLite runs ``VACUUM`` (it rewrites the whole file and needs a moment with no
        other writer). PostgreSQL runs ``VACUUM FULL`` on the run tables, locking them for
        every tenant while it runs; it needs the login role to own them.

        Raises:
            StorageUnavailable: another connection kept the database busy.
            PermissionDenied: (PostgreSQL) the login role may not rewrite the tables.
        """
        ...

    def close(self) -> None: ...


def iter_audit_entries(txn: CoreStore, tenant_id: str, *, batch: int = 1000) -> Iterator[AuditRow]:
    """Every audit entry of a tenant in sequence order, fetched in batches."""
    after = 0
    while True:
        rows = txn.list_audit_entries(tenant_id, after_seq=after, limit=batch)
        yield from rows
        if len(rows) < batch:
            return
        after = rows[-1].seq


__all__ = [
    "AppliedMigration",
    "AuditRow",
    "ComponentVersion",
    "CoreStore",
    "LangGraphStore",
    "MemoryCandidate",
    "MemoryDecisionRow",
    "MemoryHoldRow",
    "MemoryRecallRow",
    "MemoryStore",
    "MemoryTombstoneRow",
    "OperationsStore",
    "PrincipalRow",
    "ProcedureStore",
    "ProcedureVersionRow",
    "RunStore",
    "StepWrite",
    "Storage",
    "TenantRow",
    "TextMatch",
    "ThreadStore",
    "Transaction",
    "WebhookStore",
    "WorkingRow",
    "WorkingStore",
    "iter_audit_entries",
]
