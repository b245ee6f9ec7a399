"""Threads, turns and summaries: what a conversation stores."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class TurnRole(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class TurnKind(enum.StrEnum):
    MESSAGE = "message"
    TOOL_CALL = "tool_call"
    OBSERVATION = "observation"
    SUMMARY = "summary"


class Thread(BaseModel):
    """A conversation of one user, in one tenant. Its turns are numbered from 1."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    thread_id: str
    user_id: str
    title: str
    created_at: datetime
    created_by: str
    updated_at: datetime
    last_turn_seq: int
    retention_days: int | None
    """Inactive this many days, the thread is purged by the retention cycle (None: kept)."""
    expires_at: datetime | None


class NewTurn(BaseModel):
    """A turn to append; the thread gives it its sequence number and id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: TurnRole
    content: str
    kind: TurnKind = TurnKind.MESSAGE
    ref: str | None = Field(None, max_length=200)
    """A reference, e.g. the tool call id shared by a tool call and its observation."""
    metadata: dict[str, Any] = Field(default_factory=dict)


class Turn(BaseModel):
    """One stored turn. Turns are written once and never rewritten."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    thread_id: str
    seq: int
    turn_id: str
    role: TurnRole
    kind: TurnKind
    content: str
    tokens: int
    """Tokens of ``content`` by the counter in use when the turn was appended."""
    ref: str | None
    metadata: dict[str, Any]
    created_at: datetime
    created_by: str


class Summary(BaseModel):
    """A summary of the turns ``from_seq``..``to_seq``, stored beside them (never instead)."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    thread_id: str
    summary_id: str
    from_seq: int
    to_seq: int
    text: str
    tokens: int
    dropped_refs: list[str]
    """References of the covered turns (tool call ids, turn ids of observations) that the
    summary text does not carry; the turns stay retrievable by them."""
    summarizer: str
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class ThreadTail:
    """A thread, its latest summary and its most recent turns, as of one moment."""

    thread: Thread
    summary: Summary | None
    turns: list[Turn]
    """Oldest first."""
