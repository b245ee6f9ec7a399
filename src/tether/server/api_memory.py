"""``/api/v1/memory``: propose, recall (explained), show with history, correct, forget,
review held proposals, and export or erase a data subject."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.errors import InvalidInput
from tether.memory.models import MemoryKind, MemoryProposal, MemoryRecord, PolicyDecision, Scope
from tether.memory.recall import RecallLogEntry, RecallResult
from tether.server.auth import Caller, TetherApp
from tether.server.pagination import Cursor, Limit, Page, page_of, paginate, text_after
from tether.server.problems import COMMON_ERRORS, error_responses

router = APIRouter(tags=["memory"], responses=COMMON_ERRORS)

MemoryId = Annotated[str, "the memory's id"]


class RecallQuery(BaseModel):
    """What to recall and where."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=4000)
    scopes: list[str] = Field(
        min_length=1,
        max_length=20,
        description="SCOPE:ID pairs to search, e.g. user:u-1, case:C-7, tenant:acme, global:-.",
    )
    limit: int = Field(10, ge=1, le=100)
    kinds: list[MemoryKind] | None = Field(None, max_length=10)
    tags: list[str] | None = Field(None, max_length=20)
    min_confidence: float = Field(0.0, ge=0.0, le=1.0)
    include_unrelated: bool = Field(False, description="Keep hits unrelated to the query.")


class Proposals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    proposals: list[MemoryProposal] = Field(
        min_length=1, max_length=1000, description="Decided and written in order."
    )


class Correction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=8000, description="The corrected content.")
    confidence: float = Field(0.95, ge=0.0, le=1.0)


class Subject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(min_length=1, max_length=200, description="The data subject's id.")


def _scopes(given: list[str]) -> list[tuple[Scope, str]]:
    scopes = []
    for item in given:
        scope, colon, scope_id = item.partition(":")
        if not colon or not scope_id:
            raise InvalidInput(f"scope {item!r}: write SCOPE:ID, e.g. user:u-1")
        try:
            scopes.append((Scope(scope), scope_id))
        except ValueError:
            valid = ", ".join(s.value for s in Scope)
            raise InvalidInput(f"scope {scope!r} is not one of {valid}") from None
    return scopes


@router.post(
    "/memory/proposals",
    summary="Propose a memory",
    response_model=PolicyDecision,
)
def propose(body: MemoryProposal, app: TetherApp, caller: Caller) -> PolicyDecision:
    """Propose a memory; the write policy decides (allowed, held for a person, refused)
    and says why. Nothing is written unless allowed or held. Needs `memory.propose`."""
    return app.memory.propose(caller, body)


@router.post(
    "/memory/proposals/batch",
    summary="Propose many memories",
    response_model=list[PolicyDecision],
)
def propose_many(body: Proposals, app: TetherApp, caller: Caller) -> list[PolicyDecision]:
    """Propose memories in a batch: each goes through the write policy in order and gets
    its decision. Texts are embedded before a write transaction opens and the batch is
    written in chunks, so a large batch never holds the write lock long. Needs
    `memory.propose`."""
    return app.memory.propose_many(caller, body.proposals)


@router.get("/memory", summary="Memories in scopes", response_model=list[MemoryRecord])
def in_scopes(
    app: TetherApp,
    caller: Caller,
    scope: Annotated[
        list[str],
        Query(min_length=1, max_length=20, description="SCOPE:ID to list, e.g. user:u-1."),
    ],
    limit: Annotated[int, Query(ge=1, le=1000, description="Most memories to list.")] = 100,
) -> list[MemoryRecord]:
    """The active memories of the named scopes, oldest first, as the caller may read them
    (held, forgotten and superseded ones are left out). Needs `memory.read`."""
    return app.memory.in_scopes(caller, _scopes(scope), limit=limit)


@router.post("/memory/recall", summary="Recall memories, explained", response_model=RecallResult)
def recall(body: RecallQuery, app: TetherApp, caller: Caller) -> RecallResult:
    """Hybrid recall (lexical and vector) within the named scopes: every hit says why it
    ranked (`why`), and `filtered_out` counts what was left out and why. Every active
    constraint in the scopes is returned. The recall is logged. Needs `memory.read`."""
    return app.memory.recall(
        caller,
        body.query,
        _scopes(body.scopes),
        limit=body.limit,
        kinds=body.kinds,
        tags=body.tags,
        min_confidence=body.min_confidence,
        include_unrelated=body.include_unrelated,
    )


@router.get("/memory/pending", summary="Held memories to review", response_model=Page[MemoryRecord])
def pending(
    app: TetherApp, caller: Caller, cursor: Cursor = None, limit: Limit = 50
) -> Page[MemoryRecord]:
    """Memories the policy held for a person, oldest first. Needs `memory.approve`
    (approver, operator, admin)."""
    records = app.memory.pending(caller, limit=10_000)
    return paginate(records, lambda record: record.memory_id, cursor=cursor, limit=limit)


@router.get("/memory/recalls", summary="Who recalled what", response_model=Page[RecallLogEntry])
def recalls(
    app: TetherApp,
    caller: Caller,
    memory_id: Annotated[
        str | None, Query(max_length=64, description="Only recalls that returned this memory.")
    ] = None,
    recalled_by: Annotated[
        str | None, Query(max_length=63, description="Only recalls by this principal.")
    ] = None,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[RecallLogEntry]:
    """The recall log, newest first: who recalled, when, a digest of the query (never its
    text), the scopes searched and the memories returned. Needs `audit.read` (approver,
    operator, admin)."""
    found = app.memory.recalls(
        caller,
        memory_id=memory_id,
        recalled_by=recalled_by,
        before=text_after(cursor),
        limit=limit + 1,
    )
    return page_of(found, lambda recall: recall.recall_id, limit=limit)


@router.get("/memory/{memory_id}", summary="Get a memory", response_model=MemoryRecord)
def get_memory(memory_id: MemoryId, app: TetherApp, caller: Caller) -> MemoryRecord:
    """One memory with its provenance (source, creator, approver), confidence, validity
    and expiry. Needs `memory.read`."""
    return app.memory.get(caller, memory_id)


@router.get(
    "/memory/{memory_id}/history",
    summary="A memory's history",
    response_model=list[MemoryRecord],
)
def history(memory_id: MemoryId, app: TetherApp, caller: Caller) -> list[MemoryRecord]:
    """Every version of the memory, oldest first: corrections supersede and keep what they
    replaced. Needs `memory.read`."""
    return app.memory.history(caller, memory_id)


@router.post(
    "/memory/{memory_id}/correct",
    summary="Correct a memory",
    response_model=PolicyDecision,
    responses=error_responses(409),
)
def correct(
    memory_id: MemoryId, body: Correction, app: TetherApp, caller: Caller
) -> PolicyDecision:
    """Replace an active memory's content through the write policy; the old version stays
    in its history. Needs `memory.correct` (approver, operator, admin)."""
    return app.memory.correct(caller, memory_id, body.text, confidence=body.confidence)


@router.post(
    "/memory/{memory_id}/forget",
    summary="Forget a memory",
    response_model=MemoryRecord,
    responses=error_responses(409),
)
def forget(memory_id: MemoryId, app: TetherApp, caller: Caller) -> MemoryRecord:
    """Hide the memory at once; it is deleted after the grace period. Needs
    `memory.forget` and the right to write in its scope."""
    return app.memory.forget(caller, memory_id)


@router.post("/memory/{memory_id}/confirm", summary="Confirm a memory", response_model=MemoryRecord)
def confirm(memory_id: MemoryId, app: TetherApp, caller: Caller) -> MemoryRecord:
    """Feedback that the memory held: its confidence rises. Needs `memory.feedback`."""
    return app.memory.confirm(caller, memory_id)


@router.post(
    "/memory/{memory_id}/contradict", summary="Contradict a memory", response_model=MemoryRecord
)
def contradict(memory_id: MemoryId, app: TetherApp, caller: Caller) -> MemoryRecord:
    """Feedback that the memory did not hold: its confidence falls and recall ranks it
    lower. Needs `memory.feedback` and the right to change a memory in its scope."""
    return app.memory.contradict(caller, memory_id)


@router.post(
    "/memory/{memory_id}/approve",
    summary="Approve a held memory",
    response_model=MemoryRecord,
    responses=error_responses(409),
)
def approve(memory_id: MemoryId, app: TetherApp, caller: Caller) -> MemoryRecord:
    """Make a held memory active. Needs `memory.approve`."""
    return app.memory.approve(caller, memory_id)


@router.post(
    "/memory/{memory_id}/reject",
    summary="Reject a held memory",
    response_model=MemoryRecord,
    responses=error_responses(409),
)
def reject(memory_id: MemoryId, app: TetherApp, caller: Caller) -> MemoryRecord:
    """Refuse a held memory: it never becomes active. Needs `memory.approve`."""
    return app.memory.reject(caller, memory_id)


@router.post("/subjects/export", summary="Export a data subject", response_model=dict[str, Any])
def export_subject(body: Subject, app: TetherApp, caller: Caller) -> dict[str, Any]:
    """Everything the tenant holds about a person: memories, threads, working memory.
    Needs `subjects.export` (operator, admin)."""
    return app.subjects.export(caller, body.user_id)


@router.post("/subjects/erase", summary="Erase a data subject", response_model=dict[str, int])
def erase_subject(body: Subject, app: TetherApp, caller: Caller) -> dict[str, int]:
    """Erase every copy of a person's data (rows, indexes, embeddings, history); only
    tombstones and the keyed hashes of the audit trail remain. Counts what was erased.
    Needs `subjects.erase` (admin)."""
    return app.subjects.erase(caller, body.user_id)
