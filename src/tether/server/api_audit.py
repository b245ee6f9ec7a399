"""``/api/v1/audit``: the tenant's audit trail, filtered by run, principal or memory; and
``/api/v1/notes``: the operator notes (reasons, comments) its entries cite by digest."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from tether.audit.log import AuditEntry
from tether.server.auth import Caller, TetherApp
from tether.server.pagination import Cursor, Limit, Page, after_number, encode_cursor
from tether.server.problems import COMMON_ERRORS

router = APIRouter(tags=["audit"], responses=COMMON_ERRORS)

_SCAN_BATCH = 1000
_SCAN_MOST = 20


@router.get("/audit", summary="The audit trail", response_model=Page[AuditEntry])
def list_entries(
    app: TetherApp,
    caller: Caller,
    action: Annotated[
        str | None, Query(max_length=200, description="Only this action (e.g. run.cancelled).")
    ] = None,
    actor: Annotated[
        str | None, Query(max_length=200, description="Only entries by this principal.")
    ] = None,
    target: Annotated[
        str | None,
        Query(max_length=300, description="Only entries about this (run:<id>, memory:<id>…)."),
    ] = None,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[AuditEntry]:
    """The tenant's audit trail in order: who did what to which object, when (recalls
    included: who recalled which memories). Subjects appear only as keyed hashes. Needs
    `audit.read` (approver, operator, admin)."""
    after = after_number(cursor)
    found: list[AuditEntry] = []
    finished = False
    for _ in range(_SCAN_MOST):
        batch = app.audit.entries(caller, after_seq=after, limit=_SCAN_BATCH)
        for entry in batch:
            after = entry.seq
            if (
                (action is None or entry.action == action)
                and (actor is None or entry.actor_id == actor)
                and (target is None or entry.target == target)
            ):
                found.append(entry)
                if len(found) == limit:
                    break
        finished = len(batch) < _SCAN_BATCH and len(found) < limit
        if finished or len(found) == limit:
            break
    return Page[AuditEntry](items=found, next_cursor=None if finished else encode_cursor(after))


NoteDigest = Annotated[
    str, Path(min_length=1, max_length=100, description="The digest an entry cites (note:…).")
]


class Note(BaseModel):
    digest: str
    text: str


@router.get("/notes/{digest}", summary="Read an operator note", response_model=Note)
def read_note(digest: NoteDigest, app: TetherApp, caller: Caller) -> Note:
    """The text of an operator's reason or comment that a run event or audit entry cites
    by digest; 404 once erased. Needs `audit.read` (approver, operator, admin)."""
    return Note(digest=digest, text=app.notes.read(caller, digest))


@router.delete("/notes/{digest}", summary="Erase an operator note", status_code=204)
def erase_note(digest: NoteDigest, app: TetherApp, caller: Caller) -> None:
    """Delete a note's text (it may name a person); the entries citing its digest stay and
    the trail still verifies. Needs `subjects.erase` (admin)."""
    app.notes.erase(caller, digest)
