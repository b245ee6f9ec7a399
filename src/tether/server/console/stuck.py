"""Stuck runs and the operator's actions on a run.

The stuck page lists what ``app.runs.stuck`` finds (one row per run and cause, longest
stuck first, with the suggested first step) and offers the actions an operator takes from
there, each with the reason the trail keeps: cancel and resume. The same forms sit on a
run's timeline. Each action is one service call with the logged-in principal
(``runs.control``: operators and admins); the forms are shown only to those who hold it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from tether.server.console.common import LoggedIn, Site, show
from tether.server.console.render import see_other

router = APIRouter()

Back = Annotated[Literal["run", "stuck"], Form()]
Reason = Annotated[str, Form(min_length=1, max_length=2000)]


def back_to(request: Request, back: str, run_id: str) -> Response:
    root = request.scope.get("root_path", "")
    return see_other(request, f"{root}/stuck" if back == "stuck" else f"{root}/runs/{run_id}")


@router.get("/stuck", response_class=HTMLResponse)
def stuck_page(request: Request, site: Site, session: LoggedIn) -> HTMLResponse:
    principal = session.principal
    stuck = site.app.runs.stuck(principal, workflows=site.workflows, limit=500)
    runs = {item.run_id: site.app.runs.get(principal, item.run_id) for item in stuck}
    return show(site, request, "stuck.html", session, stuck=stuck, runs=runs)


@router.post("/runs/{run_id}/cancel")
def cancel(
    request: Request, site: Site, session: LoggedIn, run_id: str, reason: Reason, back: Back = "run"
) -> Response:
    site.app.runbook.cancel(session.principal, run_id, reason=reason)
    return back_to(request, back, run_id)


@router.post("/runs/{run_id}/resume")
def resume(
    request: Request, site: Site, session: LoggedIn, run_id: str, reason: Reason, back: Back = "run"
) -> Response:
    site.app.runbook.resume(session.principal, run_id, reason=reason)
    return back_to(request, back, run_id)
