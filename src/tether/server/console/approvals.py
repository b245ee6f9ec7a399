"""The approvals inbox: every approval request of the tenant, with what it asks and what
each answer does, and the approve and reject forms.

Each request shows what the approval record carries (``ApprovalRequest``): the proposed
action (the exact one whose digest gates the effect), the rationale, the evidence, the
risk, the alternatives, and what happens on approve and on reject; for a request a
published policy raised, the policies that asked. The forms appear only to a principal the
map lets decide this request (``runs.decide``, the role it names, not the one who asked);
the decision itself goes through ``app.runs.decide``, which checks all of it again.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, Response

from tether.errors import InvalidInput
from tether.permissions import OPERATIONS, allows
from tether.principals import Principal, Role
from tether.runs.models import JournalKind, Wait, WaitStatus
from tether.server.console.common import LoggedIn, Site, show
from tether.server.console.render import see_other

router = APIRouter()

PAGE = 50


def may_decide(principal: Principal, wait: Wait) -> bool:
    """Whether to offer ``principal`` the decision forms of ``wait`` (the service decides)."""
    role = Role(wait.approver_role or Role.APPROVER.value)
    return (
        wait.kind is JournalKind.APPROVAL
        and wait.status is WaitStatus.OPEN
        and allows(principal, OPERATIONS["runs.decide"])
        and principal.has_role(role)
        and principal.principal_id != wait.requested_by
    )


@router.get("/approvals", response_class=HTMLResponse)
def approvals_page(
    request: Request,
    site: Site,
    session: LoggedIn,
    status: Annotated[str, Query(max_length=20)] = "open",
    after: Annotated[str, Query(max_length=64)] = "",
) -> HTMLResponse:
    """Open requests oldest first (the longest waiting on top), decided ones newest
    first; :data:`PAGE` at a time, each page continuing after the last request shown."""
    if status not in WaitStatus.__members__.values():
        raise InvalidInput(f"status {status!r} is not one of {', '.join(WaitStatus)}")
    principal = session.principal
    found = site.app.runs.waits(
        principal,
        kind=JournalKind.APPROVAL,
        status=WaitStatus(status),
        after=after.strip() or None,
        newest_first=status != "open",
        limit=PAGE + 1,
    )
    waits = found[:PAGE]
    following = waits[-1].wait_id if len(found) > PAGE else None
    return show(
        site,
        request,
        "approvals.html",
        session,
        waits=waits,
        wanted=status,
        statuses=list(WaitStatus),
        deciders={wait.wait_id: may_decide(principal, wait) for wait in waits},
        first=f"?{urlencode({'status': status})}" if after.strip() else None,
        following=f"?{urlencode({'status': status, 'after': following})}" if following else None,
    )


@router.post("/approvals/{approval_id}/decide")
def decide(
    request: Request,
    site: Site,
    session: LoggedIn,
    approval_id: str,
    decision: Annotated[Literal["approve", "reject"], Form()],
    comment: Annotated[str, Form(max_length=4000)] = "",
    back: Annotated[str, Form(max_length=20)] = "inbox",
) -> Response:
    """Approve or reject; then back to the inbox, or to the run's timeline."""
    run = site.app.runs.decide(
        session.principal,
        approval_id,
        approve=decision == "approve",
        comment=comment.strip() or None,
    )
    root = request.scope.get("root_path", "")
    target = f"{root}/runs/{run.run_id}" if back == "run" else f"{root}/approvals"
    return see_other(request, target)
