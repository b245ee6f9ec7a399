"""The audit trail: per run, per principal and per memory, with who recalled what.

Both lists read newest first, a page at a time, each with its own "older" link: the trail
(``app.audit.latest``, filtered by target, actor and action in the query itself) continues
below the last entry's sequence number; the recall log (``app.memory.recalls``) shows who
recalled which memories, for a principal or a memory (never the query text: only its
digest), and continues below the last recall. Both need ``audit.read``. Operators'
reasons, which entries cite by digest, are shown as their text.
"""

from __future__ import annotations

import json
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from tether.server.console.common import LoggedIn, Site, operator_notes, show

router = APIRouter()

PAGE = 100
Field = Annotated[str, Query(max_length=200)]


@router.get("/audit", response_class=HTMLResponse)
def audit_page(
    request: Request,
    site: Site,
    session: LoggedIn,
    run: Field = "",
    principal: Field = "",
    memory: Field = "",
    action: Field = "",
    before: Annotated[int, Query(ge=0, description="Entries below this sequence number.")] = 0,
    recalls_before: Annotated[str, Query(max_length=64)] = "",
) -> HTMLResponse:
    run, principal, memory, action = run.strip(), principal.strip(), memory.strip(), action.strip()
    recalls_before = recalls_before.strip()
    target = f"run:{run}" if run else f"memory:{memory}" if memory else None
    found = site.app.audit.latest(
        session.principal,
        before_seq=before or None,
        target=target,
        actor_id=principal or None,
        action=action or None,
        limit=PAGE + 1,
    )
    entries = found[:PAGE]
    older = entries[-1].seq if len(found) > PAGE else None
    recalls = older_recalls = None
    if not run:
        read = site.app.memory.recalls(
            session.principal,
            recalled_by=principal or None,
            memory_id=memory or None,
            before=recalls_before or None,
            limit=PAGE + 1,
        )
        recalls = read[:PAGE]
        older_recalls = recalls[-1].recall_id if len(read) > PAGE else None
    filters = {"run": run, "principal": principal, "memory": memory, "action": action}

    def link(**position: int | str | None) -> str:
        """This page's query, at another position of either list."""
        return "?" + urlencode({k: v for k, v in {**filters, **position}.items() if v})

    cited = [json.dumps(entry.details, default=str) for entry in entries]
    return show(
        site,
        request,
        "audit.html",
        session,
        entries=entries,
        notes=operator_notes(site.app, session.principal, cited),
        recalls=recalls,
        filters=filters,
        links={
            "newest_entries": link(recalls_before=recalls_before) if before else None,
            "older_entries": link(before=older, recalls_before=recalls_before)
            if older is not None
            else None,
            "newest_recalls": link(before=before) if recalls_before else None,
            "older_recalls": link(before=before, recalls_before=older_recalls)
            if older_recalls is not None
            else None,
        },
    )
