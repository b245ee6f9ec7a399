"""What a run is made of, as stored and as shown: runs, checkpoints, journal, waits, events."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

END = "__end__"
"""Returned by a node to finish the run."""


class RunStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING_FOR_USER = "waiting_for_user"
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    PAUSED = "paused"
    SCHEDULED = "scheduled"
    WAITING_FOR_CHILDREN = "waiting_for_children"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in FINISHED


FINISHED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
WAITING = frozenset(
    {
        RunStatus.WAITING_FOR_USER,
        RunStatus.WAITING_FOR_APPROVAL,
        RunStatus.PAUSED,
        RunStatus.SCHEDULED,
        RunStatus.WAITING_FOR_CHILDREN,
    }
)


class InterruptReason(enum.StrEnum):
    CLARIFICATION_REQUIRED = "clarification_required"
    APPROVAL_REQUIRED = "approval_required"
    EXTERNAL_DEPENDENCY = "external_dependency"
    RATE_LIMITED = "rate_limited"
    SCHEDULED_RESUME = "scheduled_resume"
    HUMAN_REVIEW = "human_review"
    CHILD_RUNS = "child_runs"

    @property
    def status(self) -> RunStatus:
        """The one waiting status each reason puts a run in."""
        return _REASON_STATUS[self]


_REASON_STATUS = {
    InterruptReason.CLARIFICATION_REQUIRED: RunStatus.WAITING_FOR_USER,
    InterruptReason.APPROVAL_REQUIRED: RunStatus.WAITING_FOR_APPROVAL,
    InterruptReason.EXTERNAL_DEPENDENCY: RunStatus.PAUSED,
    InterruptReason.HUMAN_REVIEW: RunStatus.PAUSED,
    InterruptReason.RATE_LIMITED: RunStatus.SCHEDULED,
    InterruptReason.SCHEDULED_RESUME: RunStatus.SCHEDULED,
    InterruptReason.CHILD_RUNS: RunStatus.WAITING_FOR_CHILDREN,
}


class JournalKind(enum.StrEnum):
    EFFECT = "effect"
    STEP = "step"
    INTERRUPT = "interrupt"
    APPROVAL = "approval"


class JournalStatus(enum.StrEnum):
    INTENT = "intent"
    DONE = "done"
    FAILED = "failed"


class WaitStatus(enum.StrEnum):
    OPEN = "open"
    ANSWERED = "answered"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class Risk(enum.StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Run(BaseModel):
    """A run of a workflow, as stored in the run row (the state lives in checkpoints)."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    run_id: str
    workflow: str
    workflow_version: int
    status: RunStatus
    current_node: str
    state_version: int
    checkpoint_seq: int
    full_seq: int
    delta_bytes: int
    full_bytes: int
    event_seq: int
    version: int
    lease_owner: str | None
    lease_expires_at: datetime | None
    attempt: int
    steps: int
    max_steps: int
    deadline: datetime | None
    resume_at: datetime | None
    wait_id: str | None
    cancel_requested: bool
    error: str | None
    visits: dict[str, int]
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    lease_epoch: int = 0
    """Bumped by every claim: the fencing token of the current lease."""
    storage_faults: int = 0
    """Storage faults that stopped the current node in a row (reset when a node completes)."""
    priority: int = 0
    """Claimed before runs of lower priority (after runs whose lease ran out)."""
    parent_run_id: str | None = None
    """The run whose node started this one (same tenant), if any."""
    parent_wait_id: str | None = None
    """The parent's wait on its children, settled as they finish."""
    child_serial: bool = False
    """Runs only while no sibling runs (children run one at a time unless allowed)."""
    cancel_reason: str | None = None
    """Why its worker was asked to stop it (``cancel_requested``): the digest of the
    operator's note, prefixed with :data:`PAUSE_REQUEST` when the request is a pause."""


PAUSE_REQUEST = "pause:"
"""Marks a stop request (``cancel_requested``) that pauses the run instead of cancelling
it: its worker parks it ``paused`` at its next node or effect."""


class Checkpoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    run_id: str
    seq: int
    node: str
    next_node: str
    kind: str = Field(description="full: the whole state; delta: changes since seq - 1")
    payload: str
    state_version: int
    created_at: datetime


class JournalEntry(BaseModel):
    """One journaled call inside a node visit: an effect, a step, an interrupt, an approval."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    run_id: str
    node: str
    visit: int
    position: int
    name: str
    kind: JournalKind
    idempotency_key: str
    status: JournalStatus
    request_digest: str
    result: str | None
    error: str | None
    retry_safe: bool
    started_at: datetime
    finished_at: datetime | None
    duration_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    wait_id: str | None


class Wait(BaseModel):
    """An interrupt or an approval request: a durable question a run waits on."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    wait_id: str
    run_id: str
    node: str
    visit: int
    position: int
    kind: JournalKind
    reason: InterruptReason
    status: WaitStatus
    message: str
    request: dict[str, Any]
    action_digest: str | None
    approver_role: str | None
    requested_by: str
    resume_at: datetime | None
    expires_at: datetime | None
    created_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    resolution: dict[str, Any] | None


class RunEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    run_id: str
    seq: int
    at: datetime
    type: str
    node: str | None
    duration_ms: float | None
    data: dict[str, Any]


class ApprovalRequest(BaseModel):
    """What an approver sees: stored as the ``request`` of an approval ``Wait``."""

    model_config = ConfigDict(frozen=True)

    title: str
    action: dict[str, Any] = Field(description="the exact action; its digest gates the effect")
    rationale: str
    evidence: list[str] = Field(default_factory=list, description="references, e.g. note:12")
    risk: Risk = Risk.MEDIUM
    alternatives: list[str] = Field(default_factory=list)
    on_approve: str = Field("", description="what happens if approved")
    on_reject: str = Field("", description="what happens if rejected")


class ApprovalDecision(BaseModel):
    """What ``ctx.approval`` returns once the request is decided."""

    model_config = ConfigDict(frozen=True)

    approval_id: str
    status: WaitStatus
    action_digest: str
    decided_by: str | None
    comment: str | None

    @property
    def approved(self) -> bool:
        return self.status is WaitStatus.APPROVED

    @classmethod
    def expired(cls, wait: Wait) -> ApprovalDecision:
        """The decision an approval request gets when it expires undecided: never approved."""
        return cls(
            approval_id=wait.wait_id,
            status=WaitStatus.EXPIRED,
            action_digest=wait.action_digest or "",
            decided_by=None,
            comment="expired",
        )


class Usage(BaseModel):
    """Tokens and money a model call cost, for the event log."""

    model_config = ConfigDict(frozen=True)

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
