"""The storage contract, one protocol per component.

Each protocol lists the typed operations of one component inside an open transaction;
:class:`tether.storage.base.Transaction` combines them all. A service that uses only some
components can take only their protocols. Every backend's transaction class is held to
each protocol by mypy (see ``tether.storage._conformance``), so an operation missing,
renamed or with another signature in one backend fails type checking.

Every method takes the tenant explicitly, so every query carries it; on PostgreSQL
row-level security checks it a second time. Functions taking a transaction end in ``_txn``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from tether.storage.rows import (
    ApiKeyRow,
    AuditRow,
    InboxRow,
    MemoryCandidate,
    MemoryDecisionRow,
    MemoryHoldRow,
    MemoryRecallRow,
    MemoryTombstoneRow,
    PrincipalRow,
    ProcedureVersionRow,
    RetentionCandidate,
    RunFigures,
    RunHoldRow,
    RunnableRun,
    RunningCounts,
    RunRowCounts,
    StuckCutoffs,
    StuckRow,
    TenantRow,
    TextMatch,
    WebhookDeliveryRow,
    WebhookEndpointRow,
    WorkingRow,
)

if TYPE_CHECKING:
    from tether.memory.models import MemoryRecord
    from tether.runs.models import Checkpoint, JournalEntry, Run, RunEvent, Wait
    from tether.threads.models import Summary, Thread, Turn


class CoreStore(Protocol):
    """Tenants, principals, their API keys, the audit chain and schema meta data."""

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
    def list_audit_latest(
        self,
        tenant_id: str,
        *,
        before_seq: int | None = None,
        target: str | None = None,
        actor_id: str | None = None,
        action: str | None = None,
        limit: int = 100,
    ) -> list[AuditRow]:
        """Entries newest first, below ``before_seq`` when given, matching every filter
        given (``target``, ``actor_id``, ``action``)."""
        ...

    def upsert_principal(self, row: PrincipalRow) -> None: ...
    def get_principal(self, tenant_id: str, principal_id: str) -> PrincipalRow | None: ...
    def list_principals(self, tenant_id: str) -> list[PrincipalRow]: ...
    def get_meta(self, key: str) -> str | None: ...
    def insert_api_key(self, row: ApiKeyRow) -> None: ...
    def get_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRow | None: ...
    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRow]: ...
    def revoke_api_key(self, tenant_id: str, key_id: str, *, at: datetime, by: str) -> bool:
        """Mark the key revoked; ``False`` if it does not exist or was revoked already."""
        ...


class RunStore(Protocol):
    """Durable runs: run rows, checkpoints, the journal, waits and events.

    See :mod:`tether.runs.models` for the stored models.
    """

    def insert_run(self, run: Run) -> None: ...
    def get_run(self, tenant_id: str, run_id: str) -> Run | None: ...
    def list_runs(self, tenant_id: str, *, status: str | None, limit: int) -> list[Run]: ...
    def list_runs_page(
        self,
        tenant_id: str,
        *,
        status: str | None,
        workflow: str | None,
        created_after: datetime | None,
        created_before: datetime | None,
        before_run_id: str | None,
        limit: int,
    ) -> list[Run]:
        """Runs newest first by id, below ``before_run_id`` when given, filtered."""
        ...

    def save_run(
        self, run: Run, *, expected_version: int, expected_owner: str | None
    ) -> tuple[int, bool] | None: ...
    def request_cancel(self, tenant_id: str, run_id: str, *, reason: str) -> bool:
        """Ask the worker running the run to cancel it, keeping ``reason`` for its
        ``run.cancelled`` event."""
        ...

    def set_run_control(
        self,
        tenant_id: str,
        run_id: str,
        *,
        workflow_version: int,
        cancel_requested: bool,
        cancel_reason: str | None,
        expected_version: int,
    ) -> bool:
        """Pin the run to ``workflow_version`` and set or clear a request that its worker
        stop it (``save_run`` writes neither), if the run is at ``expected_version``."""
        ...

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

    def renew_lease(
        self, tenant_id: str, run_id: str, *, owner: str, epoch: int, lease_expires_at: datetime
    ) -> bool:
        """Extend the lease if ``owner`` still holds it at ``epoch`` (the version stays)."""
        ...

    def release_after_fault(
        self,
        tenant_id: str,
        run_id: str,
        *,
        owner: str,
        epoch: int,
        error: str,
        resume_at: datetime,
        now: datetime,
    ) -> Run | None:
        """Hand the run back after a storage fault if ``owner`` holds it at ``epoch``."""
        ...

    def mark_calls_ended(self, entries: Sequence[JournalEntry], *, at: datetime) -> None:
        """Mark effect intents still without a result as having had their call end at
        ``at`` (it returned or raised; its outcome went unrecorded)."""
        ...

    def find_runnable(
        self,
        *,
        now: datetime,
        workflow_keys: Sequence[str],
        limit: int,
        workflow_limits: Mapping[str, int] | None = None,
    ) -> list[RunnableRun]:
        """Runnable runs, those whose lease ran out first, then by priority (highest
        first), then oldest first; none whose tenant (``run_limits``) or workflow
        (``workflow_limits``: name → most running runs) is at its limit."""
        ...

    def lock_run_limits(self, tenant_id: str, workflow: str) -> None:
        """Take the tenant's and the workflow's limit lock, held until the transaction ends
        (a no-op where writers are serialised anyway)."""
        ...

    def running_counts(
        self, tenant_id: str, run_id: str, workflow: str, *, now: datetime
    ) -> RunningCounts: ...
    def lock_children(self, tenant_id: str, parent_run_id: str) -> None:
        """Take the lock of a parent's children, held until the transaction ends (a no-op
        where writers are serialised anyway)."""
        ...

    def running_siblings(
        self, tenant_id: str, parent_run_id: str, run_id: str, *, now: datetime
    ) -> int: ...
    def list_children(self, tenant_id: str, parent_run_id: str) -> list[Run]: ...
    def find_child_waits_to_settle(self, *, limit: int) -> list[tuple[str, str]]:
        """Open waits on child runs of which at least one has finished, in every tenant."""
        ...

    def get_run_limit(self, tenant_id: str) -> int | None: ...
    def set_run_limit(
        self, tenant_id: str, max_running: int | None, *, now: datetime, by: str
    ) -> None: ...
    def next_due(self) -> datetime | None: ...
    def run_figures(self, *, now: datetime, expiring_by: datetime) -> RunFigures:
        """Runs by status, the oldest running and waiting, the queue's depth, approvals
        open and expiring by ``expiring_by``, failed runs by the node they failed in."""
        ...

    def find_stuck(self, tenant_id: str, cutoffs: StuckCutoffs) -> list[StuckRow]:
        """The runs of ``tenant_id`` stuck by each cause (see :mod:`tether.runs.stuck`)."""
        ...

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
        after_wait_id: str | None = None,
        newest_first: bool = False,
        limit: int = 100,
    ) -> list[Wait]:
        """Waits by request time, oldest first (or newest first), filtered; a page
        continues past the wait ``after_wait_id`` in that order."""
        ...

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
    ) -> bool:
        """Close an open wait; whether it was still open. ``resolution`` is the resolver's
        free-form JSON object, stored as canonical JSON."""
        ...

    def insert_events(self, events: Sequence[RunEvent]) -> None: ...
    def list_events(
        self, tenant_id: str, run_id: str, *, after_seq: int = 0, limit: int = 10_000
    ) -> list[RunEvent]: ...


class MemoryStore(Protocol):
    """Governed memory: records, their text index and vectors, and the decision, recall,
    hold and tombstone logs.

    See :mod:`tether.memory.models` for the stored models.
    """

    def insert_memory(self, record: MemoryRecord, context: str | None = None) -> None: ...
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
    def insert_memory_decision(self, values: MemoryDecisionRow) -> None: ...
    def insert_memory_decisions(self, decisions: Sequence[MemoryDecisionRow]) -> None: ...
    def delete_memory_decisions_for(
        self, tenant_id: str, memory_id: str, subject_hash: str
    ) -> None: ...
    def insert_memory_recall(self, values: MemoryRecallRow) -> None: ...
    def insert_memory_recalls(self, recalls: Sequence[MemoryRecallRow]) -> None: ...
    def list_memory_recalls(
        self,
        tenant_id: str,
        *,
        principal_id: str | None,
        memory_id: str | None,
        limit: int,
        before_id: str | None = None,
    ) -> list[MemoryRecallRow]:
        """The recall log, newest first: by ``principal_id``, or returning ``memory_id``;
        below the recall ``before_id`` when given."""
        ...

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
    def insert_memory_hold(self, values: MemoryHoldRow) -> None: ...
    def list_memory_holds(self, tenant_id: str) -> list[tuple[str, str]]: ...
    def insert_memory_tombstone(self, values: MemoryTombstoneRow) -> None: ...
    def get_memory_policy(self, tenant_id: str) -> str | None: ...
    def upsert_memory_policy(self, tenant_id: str, config: str, at: datetime, by: str) -> None: ...
    def list_memories_due(
        self, tenant_id: str, *, now: datetime, limit: int
    ) -> list[MemoryRecord]: ...


class WorkingStore(Protocol):
    """Working memory kept in the database: short-lived entries per session.

    Entries at or past their expiry are never returned.
    """

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

    def purge_expired_working_entries(self, *, now: datetime, tenant_id: str | None = None) -> int:
        """Delete expired entries (of ``tenant_id`` only, if given); how many."""
        ...


class ThreadStore(Protocol):
    """Conversation threads, their turns and summaries.

    See :mod:`tether.threads.models` for the stored models.
    """

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


class ProcedureStore(Protocol):
    """Published skill and policy sets, keyed by content hash, and which one is current."""

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


class OperationsStore(Protocol):
    """Run retention (policies per workflow, compaction), legal holds on runs, the
    erasable notes operator actions reference by digest, housekeeping leases and the run
    inbox."""

    def upsert_retention_policy(
        self, tenant_id: str, workflow: str, keep_days: int, *, at: datetime, by: str
    ) -> None: ...
    def delete_retention_policy(self, tenant_id: str, workflow: str) -> bool: ...
    def list_retention_policies(self, tenant_id: str) -> dict[str, int]: ...
    def list_retention_candidates(
        self, tenant_id: str, *, finished_before: datetime, after_run_id: str, limit: int
    ) -> list[RetentionCandidate]:
        """Finished runs last changed before ``finished_before`` and not yet compacted,
        by run id after ``after_run_id``."""
        ...

    def count_run_rows(self, tenant_id: str, run_id: str) -> RunRowCounts: ...
    def compact_run(
        self, tenant_id: str, run_id: str, *, final_seq: int, final_state_json: str, at: datetime
    ) -> bool:
        """Keep the run row, its final checkpoint (as a full snapshot) and its effect
        journal without payloads; delete the rest. ``False`` (nothing changed) unless the
        run is finished."""
        ...

    def insert_run_hold(self, tenant_id: str, row: RunHoldRow) -> None: ...
    def release_run_holds(self, tenant_id: str, run_id: str, *, at: datetime, by: str) -> int: ...
    def list_run_holds(self, tenant_id: str, *, limit: int) -> list[RunHoldRow]: ...
    def insert_operator_note(
        self, tenant_id: str, digest: str, text: str, *, at: datetime, by: str
    ) -> None: ...
    def get_operator_note(self, tenant_id: str, digest: str) -> str | None: ...
    def delete_operator_note(self, tenant_id: str, digest: str) -> bool: ...
    def acquire_housekeeping_lease(
        self,
        tenant_id: str,
        *,
        owner: str,
        now: datetime,
        lease_expires_at: datetime,
        force: bool,
    ) -> bool: ...
    def finish_housekeeping_lease(
        self, tenant_id: str, *, owner: str, now: datetime, next_due_at: datetime
    ) -> bool: ...
    def release_housekeeping_lease(self, tenant_id: str, *, owner: str) -> None: ...
    def max_inbox_seq(self, tenant_id: str, run_id: str) -> int: ...
    def insert_inbox_message(self, tenant_id: str, run_id: str, row: InboxRow) -> None: ...
    def list_inbox_messages(
        self, tenant_id: str, run_id: str, *, after_seq: int, limit: int
    ) -> list[InboxRow]: ...
    def list_journal_step_results(self, tenant_id: str, run_id: str, name: str) -> list[str]: ...


class WebhookStore(Protocol):
    """Webhooks: the tenant's URL allowlist, endpoints, the delivery log, and the scans of
    runs and approvals that find what to notify."""

    def insert_webhook_prefix(
        self, tenant_id: str, prefix: str, *, at: datetime, by: str
    ) -> None: ...
    def delete_webhook_prefix(self, tenant_id: str, prefix: str) -> bool: ...
    def list_webhook_prefixes(self, tenant_id: str) -> list[str]: ...
    def insert_webhook_endpoint(self, tenant_id: str, row: WebhookEndpointRow) -> None: ...
    def remove_webhook_endpoint(
        self, tenant_id: str, endpoint_id: str, *, at: datetime
    ) -> bool: ...
    def list_webhook_endpoints(self, tenant_id: str) -> list[WebhookEndpointRow]: ...
    def get_webhook_endpoint(
        self, tenant_id: str, endpoint_id: str
    ) -> WebhookEndpointRow | None: ...
    def insert_webhook_delivery(
        self,
        tenant_id: str,
        *,
        delivery_id: str,
        endpoint_id: str,
        event_key: str,
        event: str,
        payload_json: str,
        at: datetime,
    ) -> bool:
        """Queue a delivery unless the endpoint already has one for ``event_key``."""
        ...

    def find_due_webhook_deliveries(
        self, *, now: datetime, limit: int
    ) -> list[tuple[str, str]]: ...
    def get_webhook_delivery(
        self, tenant_id: str, delivery_id: str
    ) -> WebhookDeliveryRow | None: ...
    def update_webhook_delivery(self, row: WebhookDeliveryRow, *, expected_attempts: int) -> bool:
        """Store the delivery's new state if nobody attempted it meanwhile."""
        ...

    def list_webhook_deliveries(
        self, tenant_id: str, *, status: str | None, limit: int
    ) -> list[WebhookDeliveryRow]: ...
    def get_webhook_cursor(self, tenant_id: str, source: str) -> datetime | None: ...
    def set_webhook_cursor(self, tenant_id: str, source: str, seen_at: datetime) -> None: ...
    def list_runs_finished_since(
        self, tenant_id: str, *, since: datetime, limit: int
    ) -> list[Run]: ...
    def list_approvals_since(
        self, tenant_id: str, *, since: datetime, limit: int
    ) -> list[Wait]: ...
    def list_approvals_expiring(
        self, tenant_id: str, *, now: datetime, until: datetime, limit: int
    ) -> list[Wait]: ...
