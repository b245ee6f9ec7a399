"""The audit trail: per run, per principal and per memory, with who recalled what.

The trail (``app.audit.entries``) is read in order and filtered here, a page at a time;
the recall log (``app.memory.recalls``) shows who recalled which memories, for a
principal or a memory (never the query text: only its digest). Both need ``audit.read``.
Operators' reasons, which entries cite by digest, are shown as their text.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from tether.audit.log import AuditEntry
from tether.server.console.common import LoggedIn, Site, operator_notes, show

router = APIRouter()

PAGE = 100
_BATCH = 1000
_MOST_BATCHES = 20
Field = Annotated[str, Query(max_length=200)]


def matching_entries(
    site: Site, session: LoggedIn, *, target: str, actor: str, action: str, after: int
) -> tuple[list[AuditEntry], int | None]:
    """Up to :data:`PAGE` entries after ``after`` that match, and where the next page
    starts (``None``: the trail ends here)."""
    found: list[AuditEntry] = []
    for _ in range(_MOST_BATCHES):
        batch = site.app.audit.entries(session.principal, after_seq=after, limit=_BATCH)
        for entry in batch:
            after = entry.seq
            if (
                (not target or entry.target == target)
                and (not actor or entry.actor_id == actor)
                and (not action or entry.action == action)
            ):
                found.append(entry)
                if len(found) == PAGE:
                    return found, after
        if len(batch) < _BATCH:
            return found, None
    return found, after


@router.get("/audit", response_class=HTMLResponse)
def audit_page(
    request: Request,
    site: Site,
    session: LoggedIn,
    run: Field = "",
    principal: Field = "",
    memory: Field = "",
    action: Field = "",
    after: Annotated[int, Query(ge=0)] = 0,
) -> HTMLResponse:
    run, principal, memory, action = run.strip(), principal.strip(), memory.strip(), action.strip()
    target = f"run:{run}" if run else f"memory:{memory}" if memory else ""
    entries, more = matching_entries(
        site, session, target=target, actor=principal, action=action, after=after
    )
    recalls = None
    if not run:
        recalls = site.app.memory.recalls(
            session.principal, recalled_by=principal or None, memory_id=memory or None, limit=PAGE
        )
    cited = [json.dumps(entry.details, default=str) for entry in entries]
    return show(
        site,
        request,
        "audit.html",
        session,
        entries=entries,
        notes=operator_notes(site.app, session.principal, cited),
        more=more,
        recalls=recalls,
        filters={"run": run, "principal": principal, "memory": memory, "action": action},
    )
