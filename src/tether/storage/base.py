"""The storage protocol: the one boundary between Tether's logic and a database.

Logic layers (``runs/``, ``memory/``, ``audit/`` …) call these methods and never see SQL.
A transaction is opened *for a tenant* (``Storage.transaction``) or, for cross-tenant
maintenance only, as the system (``Storage.system_transaction``). Every method still takes
the tenant explicitly, so every query carries it; on PostgreSQL row-level security checks
it a second time.

Rows crossing the boundary are frozen dataclasses of plain values; JSON payloads cross as
canonical JSON text so digests taken over them are stable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from tether.memory.models import MemoryKind, MemoryRecord, MemoryStatus
    from tether.runs.models import Checkpoint, JournalEntry, Run, RunEvent, Wait
    from tether.threads.models import Summary, Thread, Turn


@dataclass(frozen=True)
class TenantRow:
    tenant_id: str
    name: str
    created_at: datetime
    created_by: str
    audit_seq: int
    audit_head: str


@dataclass(frozen=True)
class PrincipalRow:
    tenant_id: str
    principal_id: str
    roles_json: str
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str


@dataclass(frozen=True)
class AuditRow:
    tenant_id: str
    seq: int
    entry_id: str
    at: datetime
    actor_id: str
    action: str
    target: str
    details_json: str
    subjects_json: str
    prev_hash: str
    entry_hash: str


@dataclass(frozen=True)
class ComponentVersion:
    """Schema version of one component: what the database has, what this code knows."""

    component: str
    applied: int
    latest: int


@dataclass(frozen=True)
class AppliedMigration:
    component: str
    version: int
    name: str


@dataclass(frozen=True)
class ProcedureVersionRow:
    """One published version of a tenant's procedures (skills and policies)."""

    tenant_id: str
    version: str
    documents_json: str
    source: str
    published_at: datetime
    published_by: str


@dataclass(frozen=True)
class MemoryCandidate:
    """What recall ranks and filters a memory by, without building the whole record:
    only the final hits are read as :class:`MemoryRecord`."""

    tenant_id: str
    memory_id: str
    kind: MemoryKind
    status: MemoryStatus
    tags: list[str]
    confidence: float
    access_count: int
    valid_from: datetime
    valid_to: datetime | None
    expires_at: datetime | None


@dataclass(frozen=True)
class TextMatch:
    """A memory a word query matched, with what the near-duplicate check compares."""

    memory_id: str
    text: str
    kind: MemoryKind
    status: MemoryStatus


@dataclass(frozen=True)
class WorkingRow:
    """One live working-memory entry: its key, canonical JSON value and expiry."""

    key: str
    value_json: str
    expires_at: datetime | None


@dataclass(frozen=True)
class StepWrite:
    """Everything one durable step writes, in one transaction guarded by the run's version
    and lease. See :meth:`Storage.write_step`."""

    run: Run
    expected_version: int
    expected_owner: str | None
    cancellable: bool
    journal: Sequence[JournalEntry] = ()
    checkpoint: Checkpoint | None = None
    waits: Sequence[Wait] = ()
    resolved: Sequence[Wait] = ()
    """Open waits to close, carrying their new status, resolver and resolution."""
    events: Sequence[RunEvent] = ()


class Transaction(Protocol):
    """Typed operations inside one open transaction. Functions taking one end in ``_txn``."""

    def insert_tenant(self, row: TenantRow) -> None: ...
    def get_tenant(self, tenant_id: str) -> TenantRow | None: ...
    def list_tenants(self) -> list[TenantRow]: ...
    def lock_audit_head(self, tenant_id: str) -> tuple[int, str]:
        """The tenant's last audit sequence and hash, locked until the transaction ends."""
        ...

    def set_audit_head(self, tenant_id: str, seq: int, head: str) -> None: ...
    def insert_audit_entry(self, row: AuditRow) -> None: ...
    def list_audit_entries(
        self, tenant_id: str, *, after_seq: int = 0, limit: int = 1000
    ) -> list[AuditRow]: ...
    def upsert_principal(self, row: PrincipalRow) -> None: ...
    def get_principal(self, tenant_id: str, principal_id: str) -> PrincipalRow | None: ...
    def list_principals(self, tenant_id: str) -> list[PrincipalRow]: ...
    def get_meta(self, key: str) -> str | None: ...
    def insert_meta(self, key: str, value: str) -> None: ...

    # runs (see tether.runs.models for the stored models)
    def insert_run(self, run: Run) -> None: ...
    def get_run(self, tenant_id: str, run_id: str) -> Run | None: ...
    def list_runs(self, tenant_id: str, *, status: str | None, limit: int) -> list[Run]: ...
    def save_run(
        self, run: Run, *, expected_version: int, expected_owner: str | None
    ) -> tuple[int, bool] | None: ...
    def request_cancel(self, tenant_id: str, run_id: str) -> bool: ...
    def claim_run(
        self,
        tenant_id: str,
        run_id: str,
        *,
        owner: str,
        lease_expires_at: datetime,
        now: datetime,
        workflow_keys: Sequence[str],
    ) -> Run | None:
        """Lease the run to ``owner`` if it is runnable and its workflow is one of
        ``workflow_keys`` (``name@version``)."""
        ...

    def find_runnable(
        self, *, now: datetime, workflow_keys: Sequence[str], limit: int
    ) -> list[tuple[str, str]]: ...
    def insert_checkpoint(self, checkpoint: Checkpoint) -> None: ...
    def list_checkpoints(
        self, tenant_id: str, run_id: str, *, from_seq: int = 0
    ) -> list[Checkpoint]: ...
    def upsert_journal_entries(self, entries: Sequence[JournalEntry]) -> None: ...
    def list_journal_visit(
        self, tenant_id: str, run_id: str, node: str, visit: int
    ) -> list[JournalEntry]: ...
    def list_journal(self, tenant_id: str, run_id: str) -> list[JournalEntry]: ...
    def insert_wait(self, wait: Wait) -> None: ...
    def get_wait(self, tenant_id: str, wait_id: str) -> Wait | None: ...
    def list_waits(
        self,
        tenant_id: str,
        *,
        kind: str | None = None,
        status: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
    ) -> list[Wait]: ...
    def find_expired_waits(self, *, now: datetime, limit: int) -> list[tuple[str, str]]: ...
    def resolve_wait(
        self,
        tenant_id: str,
        wait_id: str,
        *,
        status: str,
        resolved_at: datetime,
        resolved_by: str,
        resolution: Mapping[str, Any],
    ) -> bool: ...
    def insert_events(self, events: Sequence[RunEvent]) -> None: ...
    def list_events(
        self, tenant_id: str, run_id: str, *, after_seq: int = 0, limit: int = 10_000
    ) -> list[RunEvent]: ...

    # memory (see tether.memory.models for the stored models)
    def insert_memory(self, record: MemoryRecord) -> None: ...
    def update_memory(self, record: MemoryRecord) -> None: ...
    def get_memory(self, tenant_id: str, memory_id: str) -> MemoryRecord | None: ...
    def get_memories(self, tenant_id: str, memory_ids: Sequence[str]) -> list[MemoryRecord]: ...
    def list_memories(
        self, tenant_id: str, *, scopes: Sequence[str], statuses: Sequence[str], limit: int
    ) -> list[MemoryRecord]: ...
    def list_memories_for_tenant(
        self, tenant_id: str, *, statuses: Sequence[str], limit: int
    ) -> list[MemoryRecord]: ...
    def list_active_constraints(
        self, tenant_id: str, *, scopes: Sequence[str]
    ) -> list[MemoryRecord]: ...
    def list_memories_by_fact_key(
        self, tenant_id: str, scope: str, scope_id: str, fact_key: str
    ) -> list[MemoryRecord]: ...
    def list_memories_by_source(
        self, tenant_id: str, source_ref: str, source_version: str
    ) -> list[MemoryRecord]: ...
    def search_memories_text(
        self, tenant_id: str, *, words: Sequence[str], scopes: Sequence[str], limit: int
    ) -> list[tuple[MemoryRecord, float]]: ...
    def match_memory_texts(
        self,
        tenant_id: str,
        *,
        words: Sequence[str],
        scopes: Sequence[str],
        at_least: int,
        limit: int,
    ) -> list[TextMatch]: ...
    def list_subject_memories(self, tenant_id: str, subject_id: str) -> list[MemoryRecord]: ...
    def delete_memory(self, tenant_id: str, memory_id: str) -> None: ...
    def upsert_memory_vector(
        self, tenant_id: str, memory_id: str, embedder_id: str, vector: bytes, dim: int
    ) -> None: ...
    def upsert_memory_vectors(
        self, tenant_id: str, embedder_id: str, dim: int, vectors: Sequence[tuple[str, bytes]]
    ) -> None: ...
    def replace_memory_part_vectors(
        self,
        tenant_id: str,
        embedder_id: str,
        dim: int,
        parts: Sequence[tuple[str, Sequence[bytes]]],
    ) -> None: ...
    def bump_scope_vectors(self, tenant_id: str, scopes: Sequence[str]) -> None: ...
    def scope_vector_versions(self, tenant_id: str, scopes: Sequence[str]) -> dict[str, int]: ...
    def list_scope_vectors(
        self, tenant_id: str, *, embedder_id: str, scopes: Sequence[str]
    ) -> list[tuple[str, bytes]]: ...
    def insert_memory_decision(self, values: Mapping[str, Any]) -> None: ...
    def insert_memory_decisions(self, decisions: Sequence[Mapping[str, Any]]) -> None: ...
    def delete_memory_decisions_for(
        self, tenant_id: str, memory_id: str, subject_hash: str
    ) -> None: ...
    def insert_memory_recall(self, values: Mapping[str, Any]) -> None: ...
    def insert_memory_recalls(self, recalls: Sequence[Mapping[str, Any]]) -> None: ...
    def search_memory_candidates(
        self, tenant_id: str, *, words: Sequence[str], scopes: Sequence[str], limit: int
    ) -> list[tuple[MemoryCandidate, float]]: ...
    def get_memory_candidates(
        self, tenant_id: str, memory_ids: Sequence[str]
    ) -> list[MemoryCandidate]: ...
    def bump_memory_access(self, tenant_id: str, hits: Mapping[str, int], at: datetime) -> None: ...
    def upsert_memory_consent(
        self,
        tenant_id: str,
        user_id: str,
        purpose: str,
        granted_at: datetime,
        revoked_at: datetime | None,
    ) -> None: ...
    def has_memory_consent(self, tenant_id: str, user_id: str, purpose: str) -> bool: ...
    def count_run_memories(self, tenant_id: str, run_id: str) -> int: ...
    def insert_memory_hold(self, values: Mapping[str, Any]) -> None: ...
    def list_memory_holds(self, tenant_id: str) -> list[tuple[str, str]]: ...
    def insert_memory_tombstone(self, values: Mapping[str, Any]) -> None: ...
    def get_memory_policy(self, tenant_id: str) -> str | None: ...
    def upsert_memory_policy(self, tenant_id: str, config: str, at: datetime, by: str) -> None: ...
    def list_memories_due(
        self, tenant_id: str, *, now: datetime, limit: int
    ) -> list[MemoryRecord]: ...

    # working memory (entries at or past their expiry are never returned)
    def upsert_working_entry(
        self,
        tenant_id: str,
        session_id: str,
        key: str,
        value_json: str,
        *,
        expires_at: datetime | None,
        now: datetime,
    ) -> None: ...
    def get_working_entry(
        self, tenant_id: str, session_id: str, key: str, *, now: datetime
    ) -> WorkingRow | None: ...
    def list_working_entries(
        self, tenant_id: str, session_id: str, *, now: datetime
    ) -> list[WorkingRow]: ...
    def touch_working_entry(
        self,
        tenant_id: str,
        session_id: str,
        key: str,
        *,
        expires_at: datetime | None,
        now: datetime,
    ) -> bool: ...
    def delete_working_entry(
        self, tenant_id: str, session_id: str, key: str, *, now: datetime
    ) -> bool:
        """Delete the entry, expired or not; whether a live one was there."""
        ...

    def delete_working_session(self, tenant_id: str, session_id: str, *, now: datetime) -> int:
        """Delete every entry of the session; how many live ones there were."""
        ...

    def purge_expired_working_entries(self, *, now: datetime) -> int: ...

    # threads (see tether.threads.models for the stored models)
    def insert_thread(self, thread: Thread) -> None: ...
    def get_thread(self, tenant_id: str, thread_id: str) -> Thread | None: ...
    def list_threads(
        self, tenant_id: str, *, user_id: str | None = None, limit: int = 100
    ) -> list[Thread]: ...
    def list_expired_threads(
        self, tenant_id: str, *, now: datetime, limit: int
    ) -> list[Thread]: ...
    def advance_thread(
        self,
        tenant_id: str,
        thread_id: str,
        *,
        count: int,
        updated_at: datetime,
        expires_at: datetime | None,
    ) -> int | None:
        """Reserve the thread's next ``count`` sequence numbers (the row stays locked until
        the transaction ends); the new last one, or ``None`` if there is no such thread."""
        ...

    def insert_thread_turns(self, turns: Sequence[Turn]) -> None: ...
    def list_thread_turns(
        self, tenant_id: str, thread_id: str, *, from_seq: int, to_seq: int, limit: int
    ) -> list[Turn]: ...
    def list_thread_turns_before(
        self, tenant_id: str, thread_id: str, *, before_seq: int, limit: int
    ) -> list[Turn]:
        """Turns before ``before_seq``, newest first."""
        ...

    def get_thread_turn(self, tenant_id: str, turn_id: str) -> Turn | None: ...
    def list_thread_turns_by_ref(self, tenant_id: str, thread_id: str, ref: str) -> list[Turn]: ...
    def insert_thread_summary(self, summary: Summary) -> None: ...
    def list_thread_summaries(self, tenant_id: str, thread_id: str) -> list[Summary]: ...
    def latest_thread_summary(self, tenant_id: str, thread_id: str) -> Summary | None: ...
    def delete_thread(self, tenant_id: str, thread_id: str) -> tuple[int, int]:
        """Delete a thread with its turns and summaries; (turns, summaries) removed."""
        ...

    # procedures (published skill and policy sets, keyed by content hash)
    def insert_procedure_version(self, row: ProcedureVersionRow) -> None:
        """Store a version unless the tenant already has it (same hash, same content)."""
        ...

    def get_procedure_version(self, tenant_id: str, version: str) -> ProcedureVersionRow | None: ...
    def list_procedure_versions(
        self, tenant_id: str, *, limit: int
    ) -> list[ProcedureVersionRow]: ...
    def get_current_procedures(self, tenant_id: str) -> tuple[str, datetime, str] | None:
        """The version in force, when and by whom it was made current; ``None``: none."""
        ...

    def set_current_procedures(
        self, tenant_id: str, version: str, *, at: datetime, by: str
    ) -> None: ...


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
        """Apply every pending migration, in order; return what was applied."""
        ...

    def write_step(self, write: StepWrite) -> tuple[int, bool]:
        """Commit one durable step: the run row (only if still at ``expected_version`` and
        leased to ``expected_owner``), then its journal entries, checkpoint, waits and events.

        One commit on SQLite, one round trip on PostgreSQL. Returns the run's new version
        and whether cancellation has been requested.

        Raises:
            LeaseLost: the run moved on under another writer; nothing was written.
            RunCancelled: cancellation was requested and ``write.cancellable``; nothing
                was written.
        """
        ...

    def schema_status(self) -> list[ComponentVersion]: ...

    def check_schema(self) -> None:
        """Raise unless the database is exactly at the schema this code knows."""
        ...

    def close(self) -> None: ...


def iter_audit_entries(
    txn: Transaction, tenant_id: str, *, batch: int = 1000
) -> Iterator[AuditRow]:
    """Every audit entry of a tenant in sequence order, fetched in batches."""
    after = 0
    while True:
        rows = txn.list_audit_entries(tenant_id, after_seq=after, limit=batch)
        yield from rows
        if len(rows) < batch:
            return
        after = rows[-1].seq
