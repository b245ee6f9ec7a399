"""Rows and values that cross the storage boundary.

Stored models (runs, memories, threads) are pydantic models of their own packages; the
rows here are what only storage and its callers share. Frozen dataclasses carry values
storage reads back; the ``TypedDict`` rows are log and ledger rows services write and never
read back, whose keys are the table's columns. Either way, JSON crosses as canonical JSON
text (``*_json`` fields, and the JSON columns of the log rows) so digests taken over it are
stable, and timestamps cross as aware ``datetime`` values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from tether.memory.models import MemoryKind, MemoryStatus, Scope, Sensitivity
    from tether.runs.models import Checkpoint, JournalEntry, Run, RunEvent, Wait


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
class ApiKeyRow:
    """An API key as stored: never the secret, only its HMAC (``secret_hash``) and the id
    of the master key that made it (``hash_key_id``)."""

    tenant_id: str
    key_id: str
    principal_id: str
    roles_json: str
    name: str
    secret_hash: str
    hash_key_id: str
    created_at: datetime
    created_by: str
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    revoked_by: str | None = None


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
    scope: Scope
    sensitivity: Sensitivity
    kind: MemoryKind
    status: MemoryStatus
    tags: list[str]
    confidence: float
    access_count: int
    valid_from: datetime
    valid_to: datetime | None
    expires_at: datetime | None
    episode: str | None = None
    contradicted: bool = False
    text: str = ""


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
class RunnableRun:
    """A run a worker may claim, and whether its tenant has a concurrency limit."""

    tenant_id: str
    run_id: str
    workflow: str
    tenant_limited: bool
    parent_run_id: str | None = None
    child_serial: bool = False


@dataclass(frozen=True)
class RunningCounts:
    """Runs holding a live lease, in a tenant and in a workflow, besides a candidate."""

    tenant_running: int
    tenant_limit: int | None
    workflow_running: int


@dataclass(frozen=True)
class RunFigures:
    """Database-wide figures of the run engine, every tenant together, at one moment."""

    runs_by_status: dict[str, int]
    running_since: datetime | None
    """When the oldest running run was created."""
    waiting_since: datetime | None
    """When the run waiting longest parked (its last update)."""
    queue_depth: int
    approvals_pending: int
    approvals_expiring: int
    failures_by_node: dict[str, int]


@dataclass(frozen=True)
class StepWrite:
    """Everything one durable step writes, in one transaction guarded by the run's version
    and lease. See :meth:`tether.storage.base.Storage.write_step`."""

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
    children: Sequence[tuple[Run, Checkpoint, RunEvent]] = ()
    """Child runs to create, queued, each with its first checkpoint and event."""


@dataclass(frozen=True)
class RetentionCandidate:
    """A finished run not yet compacted by run retention."""

    run_id: str
    workflow: str
    finished_at: datetime
    held: bool


@dataclass(frozen=True)
class RunRowCounts:
    """How many rows one run has in each run table."""

    events: int
    checkpoints: int
    journal: int
    effects: int
    inbox: int


@dataclass(frozen=True)
class RunHoldRow:
    hold_id: str
    run_id: str
    note_digest: str
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class InboxRow:
    seq: int
    message_id: str
    message_json: str
    sent_at: datetime
    sent_by: str


@dataclass(frozen=True)
class WebhookEndpointRow:
    endpoint_id: str
    url: str
    events_json: str
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class WebhookDeliveryRow:
    tenant_id: str
    delivery_id: str
    endpoint_id: str
    event_key: str
    event: str
    payload_json: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


class MemoryDecisionRow(TypedDict):
    """One policy decision on a memory proposal, for the decision log."""

    tenant_id: str
    decision_id: str
    at: datetime
    principal_id: str
    verdict: str
    reasons: str
    """Canonical JSON list of the reasons."""
    findings: str
    """Canonical JSON list of what the policy found in the text."""
    text_digest: str
    subject_hashes: str
    """Canonical JSON list of the subjects' hashes (never the subjects themselves)."""
    memory_id: str | None
    run_id: str | None


class MemoryRecallRow(TypedDict):
    """One recall, for the recall log: who asked, a digest of what, and what came back."""

    tenant_id: str
    recall_id: str
    at: datetime
    principal_id: str
    query_digest: str
    scopes: str
    """Canonical JSON list of the scope keys searched."""
    returned: str
    """Canonical JSON list of the memory ids returned."""


class MemoryHoldRow(TypedDict):
    """A legal hold on one scope: nothing in it expires, decays, is purged or erased."""

    tenant_id: str
    hold_id: str
    scope: str
    scope_id: str
    reason: str
    created_at: datetime
    created_by: str


class MemoryTombstoneRow(TypedDict):
    """What remains of an erased data subject: a hash of who, and how much went."""

    tenant_id: str
    tombstone_id: str
    subject_hash: str
    erased_at: datetime
    erased_by: str
    counts: str
    """Canonical JSON object: rows erased per kind."""


@dataclass(frozen=True)
class StuckRow:
    """A run one stuck-run query found: the cause and since when it has held."""

    run_id: str
    workflow: str
    status: str
    cause: str
    since: datetime


@dataclass(frozen=True)
class StuckCutoffs:
    """The moments and counts past which each stuck-run query reports a run."""

    lease: datetime
    """A lease that ran out before this, unclaimed since."""
    wait: datetime
    """An open wait that expired before this."""
    effect: datetime
    """An effect intended before this with no result."""
    takeovers: int
    """At least this many lease takeovers."""
    checkpoint_by_workflow: Mapping[str, datetime]
    """Per workflow name: the last checkpoint older than this."""


@dataclass(frozen=True)
class GraphThreadRow:
    """A LangGraph thread's run row, as far as its checkpoints move it."""

    run_id: str
    status: str
    event_seq: int
    updated_at: datetime


@dataclass(frozen=True)
class GraphThreadStart:
    """A new LangGraph thread: its run row (workflow ``langgraph``, version 0, created and
    last updated by ``created_by`` at ``at``), its thread row, and the run's first event."""

    thread_id: str
    run_id: str
    status: str
    created_by: str
    at: datetime
    event: str


@dataclass(frozen=True)
class GraphEvent:
    """An event of a thread's run (``data``: JSON Tether made, string keys)."""

    run_id: str
    seq: int
    at: datetime
    type: str
    node: str
    data: Mapping[str, Any]


NextEntry = Callable[[int, str], AuditRow]
"""Makes the audit entry that follows a tenant's head, given its sequence number and hash."""


@dataclass(frozen=True)
class GraphRunUpdate:
    """What a thread's latest checkpoint or pending writes say about its run row."""

    run_id: str
    status: str
    current_node: str
    steps: int
    wait_id: str | None
    error: str | None
    event_seq: int
    updated_at: datetime
    updated_by: str
    expected_event_seq: int
    """The row is updated only if its ``event_seq`` is still this (the row the update was
    made from is current)."""


@dataclass(frozen=True)
class GraphCheckpointRow:
    """A checkpoint of a LangGraph thread: the checkpoint without its channel values
    (canonical JSON: versions, versions seen, id, time), its metadata, the channels whose
    values are stored apart (:class:`GraphBlobRow`, at the version the checkpoint lists)
    and the others' values inline (the serializer's type tag and bytes)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint_json: str
    metadata_json: str
    blob_channels: tuple[str, ...] = ()
    inline_type: str | None = None
    inline_data: bytes | None = None


@dataclass(frozen=True)
class GraphBlobRow:
    """One channel value at one version, as the checkpointer's serializer wrote it.

    ``type`` is the serializer's type tag (``"empty"``: the channel had no value). A row
    with a ``base_version`` holds only the items appended to a list: the value is the
    first ``keep`` items of the value at ``base_version``, then these.
    """

    checkpoint_ns: str
    channel: str
    version: str
    type: str
    data: bytes | None
    base_version: str | None = None
    keep: int | None = None


@dataclass(frozen=True)
class GraphWriteRow:
    """A pending write of a task, waiting for the checkpoint after its step."""

    task_id: str
    idx: int
    channel: str
    type: str
    data: bytes | None
    task_path: str = ""


@dataclass(frozen=True)
class GraphCheckpointPut:
    """A checkpoint to store with the channel values it introduces."""

    checkpoint: GraphCheckpointRow
    blobs: Sequence[GraphBlobRow]
    """The channel values new in this checkpoint."""
    graph_run_id: str | None = None
    """LangGraph's run id (metadata ``run_id``), for ``delete_for_runs``."""


@dataclass(frozen=True)
class GraphWritesPut:
    """A task's pending writes to store against a checkpoint (an existing (task, index)
    is kept unless ``replace``)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    writes: Sequence[GraphWriteRow]
    replace: bool = False


GraphPut = GraphCheckpointPut | GraphWritesPut
"""One item of :meth:`tether.storage.base.Storage.write_graph_step`."""


@dataclass(frozen=True)
class GraphWriteSummaryRow:
    """A pending write as a timeline shows it: where it belongs, what it writes, and the
    size of its serialized value (not the value)."""

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    type: str
    size: int
    task_path: str


@dataclass(frozen=True)
class StoreItemRow:
    """An item of LangGraph's key-value store: governed (its value is the text of the
    memory ``memory_id``) or, in a store that opted out of the write policy, kept here
    (``value_json``, with the vector of its indexed text)."""

    namespace: str
    key: str
    memory_id: str | None
    value_json: str | None
    vector: bytes | None
    created_at: datetime
    updated_at: datetime
    ttl_minutes: float | None
    expires_at: datetime | None
