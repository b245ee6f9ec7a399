"""Console pages of runs: the list with its filters, and one run's timeline.

The list filters by status, workflow and age, newest first, a page at a time. A principal
of a tenant sees its own tenant's runs (``app.runs.page``); a platform administrator picks
a tenant and sees its run rows (``app.platform.runs``), without their content. The
timeline shows everything the run recorded: events, checkpoints with the changes between
consecutive ones (for a LangGraph thread's run, the thread's checkpoints: step, source,
changed channels, pending writes and interrupts), effects with their keys and outcomes,
steps, waits and approvals (open ones with their decision form), and the handoff
document; operators' reasons cited by digest are shown as their text to those who may
read the notes; and the runbook forms that fit the run's status
(:mod:`tether.server.console.runbook`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse

from tether.errors import InvalidInput
from tether.permissions import OPERATIONS, allows
from tether.runs.graph_runs import is_graph_run
from tether.runs.listing import RunQuery
from tether.runs.models import JournalKind, Run, RunEvent, RunStatus, WaitStatus
from tether.server.console.approvals import may_decide
from tether.server.console.common import LoggedIn, Site, operator_notes, show
from tether.server.console.runbook import available, node_names
from tether.server.console.timeline import checkpoint_views, journal_views

router = APIRouter()

PAGE = 50
AGES: dict[str, tuple[str, str, timedelta]] = {
    "1h": ("created in the last hour", "after", timedelta(hours=1)),
    "24h": ("created in the last day", "after", timedelta(days=1)),
    "7d": ("created in the last 7 days", "after", timedelta(days=7)),
    "30d": ("created in the last 30 days", "after", timedelta(days=30)),
    "older-1d": ("older than a day", "before", timedelta(days=1)),
    "older-7d": ("older than 7 days", "before", timedelta(days=7)),
}
"""The age filter's choices: a label, which side of the moment, and how long ago."""

Text = Annotated[str, Query(max_length=200)]


def run_query(
    site: Site, status: str, workflow: str, age: str, before: str, *, limit: int
) -> RunQuery:
    """The listing's filters from the form (empty fields: no filter)."""
    if status and status not in RunStatus.__members__.values():
        raise InvalidInput(f"status {status!r} is not a run status")
    if age and age not in AGES:
        raise InvalidInput(f"age {age!r} is not one of {', '.join(AGES)}")
    moment = site.app.clock.now() - AGES[age][2] if age else None
    side = AGES[age][1] if age else ""
    return RunQuery(
        status=RunStatus(status) if status else None,
        workflow=workflow or None,
        created_after=moment if side == "after" else None,
        created_before=moment if side == "before" else None,
        before=before or None,
        limit=limit,
    )


@router.get("/runs", response_class=HTMLResponse)
def runs_page(
    request: Request,
    site: Site,
    session: LoggedIn,
    status: Text = "",
    workflow: Text = "",
    age: Text = "",
    tenant: Text = "",
    before: Annotated[str, Query(max_length=64)] = "",
) -> HTMLResponse:
    principal = session.principal
    query = run_query(site, status, workflow, age, before, limit=PAGE + 1)
    platform = allows(principal, OPERATIONS["platform.runs"])
    tenants: list[str] = []
    rows: list[Run] = []
    if platform:
        tenants = site.app.platform.tenants(principal)
        if tenant:
            rows = site.app.platform.runs(principal, tenant, query)
    else:
        tenant = principal.tenant_id
        rows = site.app.runs.page(principal, query)
    return show(
        site,
        request,
        "runs.html",
        session,
        runs=rows[:PAGE],
        graph_runs={run.run_id for run in rows if is_graph_run(run)},
        more=rows[PAGE - 1].run_id if len(rows) > PAGE else "",
        statuses=list(RunStatus),
        ages=AGES,
        platform=platform,
        tenants=tenants,
        filters={"status": status, "workflow": workflow, "age": age, "tenant": tenant},
        readable=not platform,
    )


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, site: Site, session: LoggedIn, run_id: str) -> HTMLResponse:
    principal = session.principal
    runs = site.app.runs
    run = runs.get(principal, run_id)
    waits = runs.waits(principal, run_id=run_id, status=None)
    journal = runs.journal(principal, run_id)
    open_approvals = [
        wait
        for wait in waits
        if wait.kind is JournalKind.APPROVAL and wait.status is WaitStatus.OPEN
    ]
    events = runs.events(principal, run_id)
    graph = is_graph_run(run)
    handoff = runs.handoff_document(principal, run_id)
    cited = [handoff.model_dump_json(), run.cancel_reason or ""]
    cited += [json.dumps(event.data, default=str) for event in events]
    return show(
        site,
        request,
        "run.html",
        session,
        run=run,
        events=events,
        checkpoints=checkpoint_views(runs.checkpoints(principal, run_id)),
        graph=graph,
        thread_id=graph_thread_id(events) if graph else "",
        graph_checkpoints=site.app.graphs.timeline(principal, run_id) if graph else [],
        effects=journal_views(journal, kinds=[JournalKind.EFFECT]),
        steps=journal_views(journal, kinds=[JournalKind.STEP]),
        waits=waits,
        open_approvals=open_approvals,
        deciders={wait.wait_id: may_decide(principal, wait) for wait in open_approvals},
        handoff=handoff,
        state=runs.state(principal, run_id),
        notes=operator_notes(site.app, principal, cited),
        inspection=site.app.runbook.inspect(principal, run_id),
        actions=available(run),
        nodes=node_names(site.workflows, run),
    )


def graph_thread_id(events: Sequence[RunEvent]) -> str:
    """The LangGraph thread a run checkpoints (its first event names it)."""
    for event in events:
        if event.type == "graph.thread_started":
            return str(event.data.get("thread_id", ""))
    return ""


@router.get("/runs/{run_id}/handoff.md", response_class=PlainTextResponse)
def run_handoff(site: Site, session: LoggedIn, run_id: str) -> PlainTextResponse:
    """The handoff as Markdown text (served as plain text, never rendered as HTML)."""
    text = site.app.runs.handoff(session.principal, run_id)
    return PlainTextResponse(text, media_type="text/plain; charset=utf-8")
