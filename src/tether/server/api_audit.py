"""``/api/v1/audit``: the tenant's audit trail, filtered by run, principal or memory; and
``/api/v1/notes``: the operator notes (reasons, comments) its entries cite by digest."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from tether.audit.log import AuditEntry
from tether.server.auth import Caller, TetherApp
from tether.server.pagination import Cursor, Limit, Page, after_number, page_of
from tether.server.problems import COMMON_ERRORS

router = APIRouter(tags=["audit"], responses=COMMON_ERRORS)


@router.get("/audit", summary="The audit trail", response_model=Page[AuditEntry])
def list_entries(
    app: TetherApp,
    caller: Caller,
    action: Annotated[
        str | None,
        Query(max_length=200, description="Only entries of this action (run.cancelled…)."),
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
    """The tenant's audit trail, newest first: who did what to which object, when (recalls
    are in `/memory/recalls`: who recalled which memories). Subjects appear only as keyed
    hashes. Needs `audit.read` (approver, operator, admin)."""
    before = after_number(cursor) or None
    entries = app.audit.latest(
        caller, before_seq=before, target=target, actor_id=actor, action=action, limit=limit + 1
    )
    return page_of(entries, lambda entry: entry.seq, limit=limit)


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
