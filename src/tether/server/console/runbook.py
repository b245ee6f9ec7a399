"""The runbook from the console: an operator's actions on a run, each with its reason.

Every action is one call of ``app.runbook`` with the logged-in principal (``runs.control``:
operators and admins) and the reason the form requires; the reason and any comment become
erasable operator notes that the run's event and the audit entry cite by digest. The forms
offered follow the run's status (a finished run can only be forked; a node is retried,
skipped or completed by hand only while no worker runs it); the service checks again.
Actions that need the workflow's code (skip, complete, fork, retry to another version)
use the workflows ``tether serve --workflows`` registered.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from tether.errors import InvalidInput, NotFound
from tether.runs.models import Run, RunStatus
from tether.runs.runbook import NODE_ACTION_FROM
from tether.runs.workflow import WorkflowRegistry
from tether.server.console.common import LoggedIn, Site
from tether.server.console.render import see_other

router = APIRouter()

Action = Literal["pause", "resume", "cancel", "retry", "retry_node", "skip", "complete", "fork"]
Text = Annotated[str, Form(max_length=2000)]
Json = Annotated[str, Form(max_length=100_000)]


def available(run: Run) -> list[str]:
    """The actions that fit the run's status, in the order an operator considers them."""
    status = run.status
    found = []
    if status in (RunStatus.QUEUED, RunStatus.SCHEDULED) or (
        status is RunStatus.RUNNING and not run.cancel_requested
    ):
        found.append("pause")
    if status is RunStatus.SCHEDULED or (status is RunStatus.PAUSED and run.wait_id is None):
        found.append("resume")  # a run paused on a question resumes when it is answered
    if status in (RunStatus.FAILED, RunStatus.CANCELLED):
        found.append("retry")
    if status in NODE_ACTION_FROM:
        found += ["retry_node", "skip", "complete"]
    if not status.finished:
        found.append("cancel")
    found.append("fork")
    return found


def node_names(workflows: WorkflowRegistry, run: Run) -> list[str]:
    """The nodes of the run's workflow version, if this server knows it."""
    try:
        workflow = workflows.get(run.workflow, run.workflow_version)
    except (InvalidInput, NotFound):
        return []
    return sorted(workflow.nodes)


def _fields(text: str, what: str) -> dict[str, Any]:
    """A JSON object typed into a form (state fields), or nothing when left empty."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(value, dict):
        raise InvalidInput(f'{what} must be a JSON object of state fields, e.g. {{"done": true}}')
    return value


@router.post("/runs/{run_id}/runbook/{action}")
def act(
    request: Request,
    site: Site,
    session: LoggedIn,
    run_id: str,
    action: Action,
    reason: Annotated[str, Form(min_length=1, max_length=2000)],
    comment: Text = "",
    back: Annotated[Literal["run", "stuck"], Form()] = "run",
    to_version: Annotated[str, Form(max_length=12)] = "",
    next_node: Annotated[str, Form(max_length=200)] = "",
    checkpoint: Annotated[str, Form(max_length=12)] = "",
    output: Json = "",
    patch: Json = "",
    rerun_effects: Annotated[str, Form(max_length=5)] = "",
) -> Response:
    runbook, principal, workflows = site.app.runbook, session.principal, site.workflows
    note = comment.strip() or None
    rerun = bool(rerun_effects)
    target = run_id
    if action == "pause":
        runbook.pause(principal, run_id, reason=reason, comment=note)
    elif action == "resume":
        runbook.resume(principal, run_id, reason=reason, comment=note)
    elif action == "cancel":
        runbook.cancel(principal, run_id, reason=reason, comment=note)
    elif action == "retry":
        version = int(to_version) if to_version.strip().isdigit() else None
        runbook.retry(
            principal, run_id, to_version=version, workflows=workflows, reason=reason, comment=note
        )
    elif action == "retry_node":
        runbook.retry_node(principal, run_id, rerun_effects=rerun, reason=reason, comment=note)
    elif action == "skip":
        runbook.skip(
            principal, run_id, next_node=next_node, workflows=workflows, reason=reason, comment=note
        )
    elif action == "complete":
        runbook.complete(
            principal,
            run_id,
            output=_fields(output, "the output"),
            next_node=next_node or None,
            workflows=workflows,
            reason=reason,
            comment=note,
        )
    else:
        if not checkpoint.strip().isdigit():
            raise InvalidInput("name the checkpoint to fork from (its number)")
        forked = runbook.fork(
            principal,
            run_id,
            checkpoint=int(checkpoint),
            patch=_fields(patch, "the patch") or None,
            rerun_effects=rerun,
            workflows=workflows,
            reason=reason,
            comment=note,
        )
        target = forked.run.run_id
    root = request.scope.get("root_path", "")
    if back == "stuck" and action != "fork":
        return see_other(request, f"{root}/stuck")
    return see_other(request, f"{root}/runs/{target}")
