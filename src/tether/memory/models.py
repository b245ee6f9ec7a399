"""Memory records, proposals and the policy's decisions."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Scope(enum.StrEnum):
    RUN = "run"
    CONVERSATION = "conversation"
    USER = "user"
    CASE = "case"
    TENANT = "tenant"
    GLOBAL = "global"


class MemoryKind(enum.StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"
    INSTRUCTION = "instruction"
    CONSTRAINT = "constraint"
    SUMMARY = "summary"


class SourceType(enum.StrEnum):
    USER_MESSAGE = "user_message"
    HUMAN = "human"
    TOOL_RESULT = "tool_result"
    MODEL_INFERENCE = "model_inference"
    DOCUMENT = "document"
    SYSTEM = "system"


class Sensitivity(enum.StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class MemoryStatus(enum.StrEnum):
    ACTIVE = "active"
    PENDING = "pending"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"
    EXPIRED = "expired"
    INVALIDATED = "invalidated"


class Verdict(enum.StrEnum):
    ALLOWED = "allowed"
    HELD = "held"
    REFUSED = "refused"


class MemoryProposal(BaseModel):
    """What an agent (or a person) proposes to remember. Only the policy writes."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1, max_length=8000)
    kind: MemoryKind = MemoryKind.FACT
    scope: Scope
    scope_id: str = Field(min_length=1, max_length=200)
    subjects: list[str] = Field(default_factory=list, description="user ids it is about")
    source_type: SourceType
    source_ref: str | None = Field(None, description="e.g. effect:<key>, turn:<id>, doc:<id>")
    source_version: str | None = None
    confidence: float = Field(0.8, ge=0.0, le=1.0)
    fact_key: str | None = Field(None, max_length=200, description="same key: supersede")
    sensitivity: Sensitivity = Sensitivity.INTERNAL
    tags: list[str] = Field(default_factory=list)
    run_id: str | None = Field(None, description="the run proposing it (write budget)")
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    context: str | None = Field(
        None,
        max_length=16000,
        description=(
            "where the memory came from (e.g. the neighbouring turns of its conversation): "
            "indexed for recall with the memory, never returned as its text"
        ),
    )
    episode: str | None = Field(
        None,
        max_length=200,
        description="the session or thread it came from; recall weighs memories of one together",
    )


class MemoryRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    memory_id: str
    scope: Scope
    scope_id: str
    subjects: list[str]
    kind: MemoryKind
    fact_key: str | None
    text: str
    tags: list[str]
    source_type: SourceType
    source_ref: str | None
    source_version: str | None
    created_by: str
    approved_by: str | None
    confidence: float
    sensitivity: Sensitivity
    valid_from: datetime
    valid_to: datetime | None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    supersedes: str | None
    superseded_by: str | None
    superseded_at: datetime | None
    access_count: int
    last_access: datetime | None
    status: MemoryStatus
    purge_after: datetime | None
    episode: str | None = None
    contradicted_at: datetime | None = None


class RuleResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rule: str
    verdict: Verdict
    reason: str


class PolicyDecision(BaseModel):
    """The policy's answer to a proposal. Logged without the proposal's text."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reasons: list[RuleResult]
    redacted_text: str
    findings: list[str] = Field(description="kinds of PII or secrets found (never the values)")
    retention_days: int | None
    memory_id: str | None = None
    action: str | None = Field(None, description="created, superseded, reinforced")

    @property
    def allowed(self) -> bool:
        return self.verdict is Verdict.ALLOWED


def summary(record: MemoryRecord) -> dict[str, Any]:
    """A record without its text, for logs and the audit trail."""
    return {
        "memory_id": record.memory_id,
        "scope": record.scope.value,
        "kind": record.kind.value,
        "status": record.status.value,
    }
