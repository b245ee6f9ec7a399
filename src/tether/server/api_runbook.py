"""The recovery runbook over HTTP: ``/api/v1/runs/{run_id}/…`` for inspect, fork plan,
pause, resume, cancel, retry, retry-node, skip, complete and fork.

Each endpoint calls one operation of ``app.runbook`` with the caller's principal. Every
action takes a required ``reason`` and an optional ``comment``, kept as erasable operator
notes that the run's event and the audit entry cite by digest. Skip, complete and fork
need the run's workflow, so the server must have been started with it
(``tether serve --workflows``). An action that would run effects again under new keys
without ``rerun_effects`` is a 409 whose problem lists them in ``effects``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from tether.runs.forking import ForkPlan
from tether.runs.inspection import RunInspection
from tether.runs.models import Run
from tether.runs.runbook import ForkResult
from tether.runs.workflow import WorkflowRegistry
from tether.server.api_runs import RunId, known_workflows
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS, error_responses

router = APIRouter(tags=["runbook"], responses=COMMON_ERRORS)

CONFLICT = error_responses(409)
Checkpoint = Annotated[
    int, Query(ge=0, le=2**62, description="The checkpoint's number (GET …/checkpoints).")
]
NodeName = Annotated[str, Field(min_length=1, max_length=200)]


class Reasoned(BaseModel):
    """An operator action's reason (required) and optional comment: both are kept as an
    erasable operator note that the run's event and the audit entry cite by digest."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=2000, description="Why (required).")
    comment: str | None = Field(None, max_length=2000, description="Anything else to keep.")


class Retry(Reasoned):
    to_version: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="Move the run to this newer version of its workflow (the server must "
        "know it); its state passes the workflow's upgrade functions.",
    )


class RetryNode(Reasoned):
    rerun_effects: bool = Field(
        False, description="Proceed although the node's effects run again under new keys."
    )


class Skip(Reasoned):
    next_node: NodeName = Field(description="The node the run goes on at.")


class Complete(Reasoned):
    output: dict[str, Any] = Field(
        description="What the node would have produced: state fields, each replacing the "
        "field of that name; checked against the workflow's state model."
    )
    next_node: NodeName | None = Field(
        None, description="Go on at this node; without it the run is completed."
    )


class Fork(Reasoned):
    checkpoint: int = Field(ge=0, le=2**62, description="The checkpoint to start from.")
    patch: dict[str, Any] | None = Field(None, description="State fields to change first.")
    rerun_effects: bool = Field(
        False,
        description="Proceed although effects the original did after the checkpoint run "
        "again under new keys (GET …/fork-plan lists them).",
    )
    new_run_id: str | None = Field(None, max_length=64, description="A UUID; default a new one.")


def _optional_workflows(request: Request) -> WorkflowRegistry | None:
    registry: WorkflowRegistry = request.app.state.workflows
    return registry if registry.keys else None


@router.get("/runs/{run_id}/inspect", summary="Inspect a run", response_model=RunInspection)
def inspect_run(
    run_id: RunId,
    app: TetherApp,
    caller: Caller,
    events: Annotated[int, Query(ge=1, le=1000, description="How many last events.")] = 10,
) -> RunInspection:
    """What to know before acting on a run: its latest checkpoint and state, the node and
    visit it runs next, its open waits, its last events, and its effects with what the
    journal says happened (`applied`, `failed`, `unknown`), with the suggested commands.
    Needs `runs.read`."""
    return app.runbook.inspect(caller, run_id, events=events)


@router.get("/runs/{run_id}/fork-plan", summary="Plan a fork", response_model=ForkPlan)
def fork_plan(run_id: RunId, checkpoint: Checkpoint, app: TetherApp, caller: Caller) -> ForkPlan:
    """What forking the run from `checkpoint` would do: the node the fork starts at, the
    state at the checkpoint, and the effects the original journaled after it, which the
    fork runs again under new keys. Changes nothing. Needs `runs.read`."""
    return app.runbook.plan_fork(caller, run_id, checkpoint=checkpoint)


@router.post("/runs/{run_id}/pause", summary="Pause a run", response_model=Run, responses=CONFLICT)
def pause_run(run_id: RunId, body: Reasoned, app: TetherApp, caller: Caller) -> Run:
    """Stop a run from going on until it is resumed: a queued or scheduled run at once, a
    running one at its next node or effect (`cancel_requested` until its worker parks
    it). A waiting or finished run is a conflict. Needs `runs.control` (operator,
    admin)."""
    return app.runbook.pause(caller, run_id, reason=body.reason, comment=body.comment)


@router.post(
    "/runs/{run_id}/resume", summary="Resume a run now", response_model=Run, responses=CONFLICT
)
def resume_run(run_id: RunId, body: Reasoned, app: TetherApp, caller: Caller) -> Run:
    """Put a paused or scheduled run back in the queue now (a run waiting on a question is
    resumed by answering it). The reason is required. Needs `runs.control`."""
    return app.runbook.resume(caller, run_id, reason=body.reason, comment=body.comment)


@router.post(
    "/runs/{run_id}/cancel", summary="Cancel a run", response_model=Run, responses=CONFLICT
)
def cancel_run(run_id: RunId, body: Reasoned, app: TetherApp, caller: Caller) -> Run:
    """Cancel a run: a waiting run at once, a running one at its next node or effect
    (`cancel_requested`). Completed effects are not undone. A finished run is a conflict.
    The reason is required; the `run.cancelled` event cites it by digest. Needs
    `runs.control` (operator, admin)."""
    return app.runbook.cancel(caller, run_id, reason=body.reason, comment=body.comment)


@router.post("/runs/{run_id}/retry", summary="Retry a run", response_model=Run, responses=CONFLICT)
def retry_run(run_id: RunId, body: Retry, request: Request, app: TetherApp, caller: Caller) -> Run:
    """Queue a failed or cancelled run again from its last checkpoint: its node runs as the
    same visit, so the journal replays and no recorded effect runs twice. With
    `to_version` it moves to that newer version of its workflow. Any other status is a
    conflict. Needs `runs.control`."""
    return app.runbook.retry(
        caller,
        run_id,
        reason=body.reason,
        comment=body.comment,
        to_version=body.to_version,
        workflows=_optional_workflows(request),
    )


@router.post(
    "/runs/{run_id}/retry-node", summary="Retry a node", response_model=Run, responses=CONFLICT
)
def retry_node(run_id: RunId, body: RetryNode, app: TetherApp, caller: Caller) -> Run:
    """Run the current node again as a new visit: nothing of the abandoned visit replays
    and its open waits are cancelled. When that visit journaled effects, they run again
    under new keys: without `rerun_effects` this is a 409 listing them in `effects`.
    Needs `runs.control`."""
    return app.runbook.retry_node(
        caller,
        run_id,
        reason=body.reason,
        comment=body.comment,
        rerun_effects=body.rerun_effects,
    )


@router.post("/runs/{run_id}/skip", summary="Skip a node", response_model=Run, responses=CONFLICT)
def skip_node(run_id: RunId, body: Skip, request: Request, app: TetherApp, caller: Caller) -> Run:
    """Go on at `next_node` without running the current node; the state stays as the last
    checkpoint left it and effects already journaled are not undone. A running run is a
    conflict (pause it first). Needs `runs.control`."""
    return app.runbook.skip(
        caller,
        run_id,
        next_node=body.next_node,
        reason=body.reason,
        workflows=known_workflows(request, "act on runs"),
        comment=body.comment,
    )


@router.post(
    "/runs/{run_id}/complete",
    summary="Complete a node by hand",
    response_model=Run,
    responses=CONFLICT,
)
def complete_node(
    run_id: RunId, body: Complete, request: Request, app: TetherApp, caller: Caller
) -> Run:
    """Complete the current node by hand with `output` (state fields, checked against the
    workflow's state model: a wrong field is 422 and changes nothing); the run goes on at
    `next_node`, or is completed. Needs `runs.control`."""
    return app.runbook.complete(
        caller,
        run_id,
        output=body.output,
        reason=body.reason,
        workflows=known_workflows(request, "act on runs"),
        next_node=body.next_node,
        comment=body.comment,
    )


@router.post(
    "/runs/{run_id}/fork",
    summary="Fork a run from a checkpoint",
    status_code=201,
    response_model=ForkResult,
    responses=CONFLICT,
)
def fork_run(
    run_id: RunId, body: Fork, request: Request, app: TetherApp, caller: Caller
) -> ForkResult:
    """Start a new run from one of this run's checkpoints (time travel), with `patch` on
    top of the state; the original is only read. Effects the original journaled after the
    checkpoint run again in the fork under new keys: without `rerun_effects` this is a 409
    listing them in `effects`. Answers the new run and the plan. Needs `runs.control`."""
    return app.runbook.fork(
        caller,
        run_id,
        checkpoint=body.checkpoint,
        reason=body.reason,
        workflows=known_workflows(request, "act on runs"),
        patch=body.patch,
        rerun_effects=body.rerun_effects,
        new_run_id=body.new_run_id,
        comment=body.comment,
    )
