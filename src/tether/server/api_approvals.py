"""``/api/v1/approvals``: the approvals inbox across every run of the tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.errors import NotFound
from tether.runs.models import JournalKind, Run, Wait, WaitStatus
from tether.server.auth import Caller, TetherApp
from tether.server.pagination import Cursor, Limit, Page, page_of, text_after
from tether.server.problems import COMMON_ERRORS, error_responses

router = APIRouter(tags=["approvals"], responses=COMMON_ERRORS)


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comment: str | None = Field(None, max_length=4000, description="Kept with the decision.")


@router.get("/approvals", summary="The approvals inbox", response_model=Page[Wait])
def list_approvals(
    app: TetherApp,
    caller: Caller,
    status: Annotated[WaitStatus, Query(description="The requests' status.")] = WaitStatus.OPEN,
    run_id: Annotated[str | None, Query(max_length=64, description="Only this run's.")] = None,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[Wait]:
    """Every approval request across the tenant's runs, oldest first, a page at a time:
    each with the proposed action, rationale, evidence, risk, alternatives and what
    happens on approve and on reject (`request`). Needs `runs.read`."""
    waits = app.runs.waits(
        caller,
        kind=JournalKind.APPROVAL,
        status=status,
        run_id=run_id,
        after=text_after(cursor),
        limit=limit + 1,
    )
    return page_of(waits, lambda wait: wait.wait_id, limit=limit)


@router.get("/approvals/{approval_id}", summary="Get an approval request", response_model=Wait)
def get_approval(approval_id: str, app: TetherApp, caller: Caller) -> Wait:
    """One approval request. Needs `runs.read`."""
    wait = app.runs.wait(caller, approval_id)
    if wait.kind is not JournalKind.APPROVAL:
        raise NotFound(f"{approval_id} is not an approval request; see /api/v1/waits")
    return wait


def _decide(
    app: TetherApp, caller: Caller, approval_id: str, body: Decision | None, ok: bool
) -> Run:
    comment = body.comment if body is not None else None
    return app.runs.decide(caller, approval_id, approve=ok, comment=comment)


@router.post(
    "/approvals/{approval_id}/approve",
    summary="Approve a request",
    response_model=Run,
    responses=error_responses(409),
)
def approve(approval_id: str, app: TetherApp, caller: Caller, body: Decision | None = None) -> Run:
    """Approve the request: the run resumes and the gated effect may do exactly the
    approved action. Needs the role the request names (approver by default), and never
    the principal that asked. A decided or expired request is a conflict."""
    return _decide(app, caller, approval_id, body, True)


@router.post(
    "/approvals/{approval_id}/reject",
    summary="Reject a request",
    response_model=Run,
    responses=error_responses(409),
)
def reject(approval_id: str, app: TetherApp, caller: Caller, body: Decision | None = None) -> Run:
    """Reject the request: the run resumes on its reject path. Same rules as approve."""
    return _decide(app, caller, approval_id, body, False)
