"""Stuck runs: what ``app.runs.stuck`` finds (one row per run and cause, longest stuck
first, with the first step to try), each with the runbook actions that fit it (see
:mod:`tether.server.console.runbook`); the rest are on the run's page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from tether.server.console.common import LoggedIn, Site, show
from tether.server.console.runbook import available

router = APIRouter()


@router.get("/stuck", response_class=HTMLResponse)
def stuck_page(request: Request, site: Site, session: LoggedIn) -> HTMLResponse:
    principal = session.principal
    stuck = site.app.runs.stuck(principal, workflows=site.workflows, limit=500)
    runs = {item.run_id: site.app.runs.get(principal, item.run_id) for item in stuck}
    actions = {run_id: available(run) for run_id, run in runs.items()}
    return show(site, request, "stuck.html", session, stuck=stuck, runs=runs, actions=actions)
