"""The memory browser: recall with its explanations, a memory's provenance and history,
correcting and forgetting it, and the held proposals waiting for a person.

Recall here is a real recall (``app.memory.recall``): it is logged like any other, so the
audit pages show that this operator looked. A correction goes through the write policy
like any write and keeps the old version in the history; the page says what the policy
decided when it did not simply write it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, Response

from tether.errors import InvalidInput
from tether.memory.models import Scope, Verdict
from tether.permissions import OPERATIONS, allows
from tether.server.console.common import LoggedIn, Site, show
from tether.server.console.render import see_other

router = APIRouter()

RECALL_LIMIT = 20


def parse_scopes(text: str) -> list[tuple[Scope, str]]:
    """``user:u-1, tenant:acme`` (commas or spaces) as recall's scope pairs."""
    scopes = []
    for item in text.replace(",", " ").split():
        scope, colon, scope_id = item.partition(":")
        if not colon or not scope_id:
            raise InvalidInput(f"scope {item!r}: write SCOPE:ID, e.g. user:u-1")
        if scope not in Scope.__members__.values():
            raise InvalidInput(f"scope {scope!r} is not one of {', '.join(Scope)}")
        scopes.append((Scope(scope), scope_id))
    return scopes


@router.get("/memory", response_class=HTMLResponse)
def memory_page(
    request: Request,
    site: Site,
    session: LoggedIn,
    q: Annotated[str, Query(max_length=4000)] = "",
    scopes: Annotated[str, Query(max_length=2000)] = "",
    unrelated: Annotated[str, Query(max_length=5)] = "",
    memory_id: Annotated[str, Query(max_length=64)] = "",
) -> Response:
    root = request.scope.get("root_path", "")
    if memory_id.strip():
        return see_other(request, f"{root}/memory/{memory_id.strip()}")
    result = None
    if q.strip():
        pairs = parse_scopes(scopes)
        if not pairs:
            raise InvalidInput("name at least one scope to recall from, e.g. user:u-1")
        result = site.app.memory.recall(
            session.principal,
            q.strip(),
            pairs,
            limit=RECALL_LIMIT,
            include_unrelated=bool(unrelated),
        )
    return show(
        site,
        request,
        "memory.html",
        session,
        result=result,
        filters={
            "q": q,
            "scopes": scopes or f"tenant:{session.principal.tenant_id}",
            "unrelated": bool(unrelated),
        },
    )


@router.get("/memory/pending", response_class=HTMLResponse)
def pending_page(request: Request, site: Site, session: LoggedIn) -> HTMLResponse:
    records = site.app.memory.pending(session.principal, limit=200)
    return show(site, request, "memory_pending.html", session, records=records)


@router.get("/memory/{memory_id}", response_class=HTMLResponse)
def record_page(request: Request, site: Site, session: LoggedIn, memory_id: str) -> HTMLResponse:
    principal = session.principal
    memory = site.app.memory
    record = memory.get(principal, memory_id)
    recalls = (
        memory.recalls(principal, memory_id=memory_id, limit=50)
        if allows(principal, OPERATIONS["memory.recalls"])
        else None
    )
    return show(
        site,
        request,
        "memory_record.html",
        session,
        record=record,
        history=memory.history(principal, memory_id),
        recalls=recalls,
    )


@router.post("/memory/{memory_id}/correct")
def correct(
    request: Request,
    site: Site,
    session: LoggedIn,
    memory_id: str,
    text: Annotated[str, Form(min_length=1, max_length=8000)],
    confidence: Annotated[float, Form(ge=0.0, le=1.0)] = 0.95,
) -> Response:
    decision = site.app.memory.correct(
        session.principal, memory_id, text.strip(), confidence=confidence
    )
    if decision.verdict is Verdict.ALLOWED and decision.memory_id:
        root = request.scope.get("root_path", "")
        return see_other(request, f"{root}/memory/{decision.memory_id}")
    return show(
        site,
        request,
        "memory_decision.html",
        session,
        decision=decision,
        memory_id=memory_id,
    )


@router.post("/memory/{memory_id}/forget")
def forget(request: Request, site: Site, session: LoggedIn, memory_id: str) -> Response:
    site.app.memory.forget(session.principal, memory_id)
    return see_other(request, f"{request.scope.get('root_path', '')}/memory/{memory_id}")


@router.post("/memory/{memory_id}/approve")
def approve(request: Request, site: Site, session: LoggedIn, memory_id: str) -> Response:
    site.app.memory.approve(session.principal, memory_id)
    return see_other(request, f"{request.scope.get('root_path', '')}/memory/pending")


@router.post("/memory/{memory_id}/reject")
def reject(request: Request, site: Site, session: LoggedIn, memory_id: str) -> Response:
    site.app.memory.reject(session.principal, memory_id)
    return see_other(request, f"{request.scope.get('root_path', '')}/memory/pending")
