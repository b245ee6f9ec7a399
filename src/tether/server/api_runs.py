"""``/api/v1/runs`` and ``/api/v1/waits``: start runs, read them, answer them, control them.

Each endpoint calls one operation of ``app.runs`` (or ``app.inbox``) with the caller's
principal; the operation checks the permission map. A run of another tenant does not
exist for the caller (404).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from tether.errors import InvalidInput
from tether.runs.graph_timeline import GraphCheckpointView
from tether.runs.handoff import HandoffDocument
from tether.runs.inbox import InboxMessage
from tether.runs.listing import RunQuery
from tether.runs.models import (
    Checkpoint,
    JournalEntry,
    JournalKind,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.runs.service import MAX_PRIORITY
from tether.runs.stuck import StuckRun
from tether.runs.workflow import WorkflowRegistry
from tether.server.auth import Caller, TetherApp
from tether.server.pagination import (
    Cursor,
    Limit,
    Page,
    page_of,
    paginate,
    text_after,
)
from tether.server.problems import COMMON_ERRORS, error_responses

router = APIRouter(tags=["runs"], responses=COMMON_ERRORS)

RunId = Annotated[str, "the run's id"]


class StartRun(BaseModel):
    """A run to start."""

    model_config = ConfigDict(extra="forbid")

    workflow: str = Field(
        min_length=1,
        max_length=200,
        description="NAME (its newest version this server knows) or NAME@VERSION.",
    )
    input: dict[str, Any] = Field(default_factory=dict, description="The initial state.")
    run_id: str | None = Field(None, max_length=64, description="A UUID; default a new one.")
    priority: int = Field(0, ge=-MAX_PRIORITY, le=MAX_PRIORITY)
    max_steps: int | None = Field(None, ge=1, le=1_000_000)
    deadline: AwareDatetime | None = Field(None, description="The run fails if not done by then.")


class ConcurrencyLimit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_running: int | None = Field(
        ge=1, le=1_000_000, description="Runs of the tenant running at once; null: no limit."
    )


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: Any = Field(description="The answer the waiting node receives (any JSON).")


class SendMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: Any = Field(description="What the run reads with ctx.receive() (any JSON).")


def known_workflows(request: Request, to: str = "start runs") -> WorkflowRegistry:
    """The workflows the server was started with; ``invalid_input`` when it knows none,
    since ``to`` needs them."""
    registry: WorkflowRegistry = request.app.state.workflows
    if not registry.keys:
        raise InvalidInput(
            "this server knows no workflows: start it with `tether serve --workflows "
            f"module:registry` to {to} over HTTP"
        )
    return registry


def workflow_named(registry: WorkflowRegistry, given: str) -> Any:
    name, at, version = given.partition("@")
    if at and not version.isdigit():
        raise InvalidInput(f"workflow {given!r}: use NAME or NAME@VERSION (a number)")
    return registry.get(name, int(version) if at else None)


@router.post(
    "/runs",
    summary="Start a run",
    status_code=201,
    response_model=Run,
    responses=error_responses(409),
)
def start_run(body: StartRun, request: Request, app: TetherApp, caller: Caller) -> Run:
    """Queue a new run of a workflow the server knows (`tether serve --workflows`), with
    the given initial state; a worker executes it. Needs `runs.start` (agent, operator,
    admin). An existing `run_id` is a conflict (409)."""
    workflow = workflow_named(known_workflows(request), body.workflow)
    workflow.validate_state(body.input)
    return app.runs.start(
        caller,
        workflow,
        body.input,
        run_id=body.run_id,
        max_steps=body.max_steps,
        deadline=body.deadline,
        priority=body.priority,
    )


@router.get("/runs", summary="List runs", response_model=Page[Run])
def list_runs(
    app: TetherApp,
    caller: Caller,
    status: Annotated[RunStatus | None, Query(description="Only runs in this status.")] = None,
    workflow: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="Only runs of this workflow (name)."),
    ] = None,
    created_after: Annotated[
        AwareDatetime | None,
        Query(description="Only runs created at or after this time (with its zone)."),
    ] = None,
    created_before: Annotated[
        AwareDatetime | None, Query(description="Only runs created before this time.")
    ] = None,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[Run]:
    """The tenant's runs, newest first (by id: creation order), filtered by status,
    workflow and age. Needs `runs.read` (every role)."""
    query = RunQuery(
        status=status,
        workflow=workflow,
        created_after=created_after,
        created_before=created_before,
        before=text_after(cursor),
        limit=limit + 1,
    )
    return page_of(app.runs.page(caller, query), lambda run: run.run_id, limit=limit)


@router.get("/runs/stuck", summary="List stuck runs", response_model=list[StuckRun])
def stuck_runs(
    request: Request,
    app: TetherApp,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=1000, description="Most runs to list.")] = 100,
) -> list[StuckRun]:
    """Runs that are stuck (lease expired, no checkpoint within the workflow's SLA, wait
    expired, retries exhausted…), longest stuck first, once per cause, each with the
    suggested operator action. Needs `runs.read`."""
    registry: WorkflowRegistry = request.app.state.workflows
    return app.runs.stuck(caller, workflows=registry, limit=limit)


@router.get(
    "/runs/concurrency-limit", summary="The concurrency limit", response_model=ConcurrencyLimit
)
def concurrency_limit(app: TetherApp, caller: Caller) -> ConcurrencyLimit:
    """How many of the tenant's runs may run at once (null: no limit). Needs
    `runs.read`."""
    return ConcurrencyLimit(max_running=app.runs.concurrency_limit(caller))


@router.put(
    "/runs/concurrency-limit", summary="Set the concurrency limit", response_model=ConcurrencyLimit
)
def set_concurrency_limit(
    body: ConcurrencyLimit, app: TetherApp, caller: Caller
) -> ConcurrencyLimit:
    """Let at most `max_running` of the tenant's runs run at once (null lifts the limit);
    runs over it stay queued until a running one stops. Needs `runs.limits` (admin)."""
    app.runs.set_concurrency_limit(caller, body.max_running)
    return body


@router.get("/runs/{run_id}", summary="Get a run", response_model=Run)
def get_run(run_id: RunId, app: TetherApp, caller: Caller) -> Run:
    """One run: status, current node, lease, wait, error. Needs `runs.read`."""
    return app.runs.get(caller, run_id)


@router.get("/runs/{run_id}/state", summary="Get a run's state", response_model=dict[str, Any])
def run_state(run_id: RunId, app: TetherApp, caller: Caller) -> dict[str, Any]:
    """The run's state as of its last checkpoint. Needs `runs.read`."""
    return app.runs.state(caller, run_id)


@router.get("/runs/{run_id}/events", summary="A run's timeline", response_model=Page[RunEvent])
def run_events(
    run_id: RunId, app: TetherApp, caller: Caller, cursor: Cursor = None, limit: Limit = 50
) -> Page[RunEvent]:
    """The run's events in order (created, claimed, node finished, waiting, answered,
    effects, completed…) with durations and costs. Needs `runs.read`."""
    events = app.runs.events(caller, run_id)
    return paginate(events, lambda event: event.seq, cursor=cursor, limit=limit)


@router.get(
    "/runs/{run_id}/checkpoints", summary="A run's checkpoints", response_model=Page[Checkpoint]
)
def run_checkpoints(
    run_id: RunId, app: TetherApp, caller: Caller, cursor: Cursor = None, limit: Limit = 50
) -> Page[Checkpoint]:
    """The run's checkpoints in order: a full state or the change against the previous
    one (`kind`). Needs `runs.read`."""
    checkpoints = app.runs.checkpoints(caller, run_id)
    return paginate(checkpoints, lambda checkpoint: checkpoint.seq, cursor=cursor, limit=limit)


@router.get(
    "/runs/{run_id}/graph-checkpoints",
    summary="A LangGraph thread's checkpoints",
    response_model=Page[GraphCheckpointView],
)
def run_graph_checkpoints(
    run_id: RunId, app: TetherApp, caller: Caller, cursor: Cursor = None, limit: Limit = 50
) -> Page[GraphCheckpointView]:
    """The checkpoints of the LangGraph thread behind the run (workflow `langgraph`,
    version 0), oldest first: step, source, the channels each changed since the one
    before, the pending writes of its step (task, node, channel and size, never the
    value) and the interrupts it raised with their waits. Empty for any other run. Needs
    `runs.read`."""
    entries = list(enumerate(app.graphs.timeline(caller, run_id)))
    page = paginate(entries, lambda pair: pair[0], cursor=cursor, limit=limit)
    return Page[GraphCheckpointView](
        items=[view for _, view in page.items], next_cursor=page.next_cursor
    )


@router.get("/runs/{run_id}/journal", summary="A run's journal", response_model=Page[JournalEntry])
def run_journal(
    run_id: RunId, app: TetherApp, caller: Caller, cursor: Cursor = None, limit: Limit = 50
) -> Page[JournalEntry]:
    """The run's journal in order: every effect (idempotency key, request digest, outcome),
    step, interrupt and approval it recorded. Needs `runs.read`."""
    entries = list(enumerate(app.runs.journal(caller, run_id)))
    page = paginate(entries, lambda pair: pair[0], cursor=cursor, limit=limit)
    return Page[JournalEntry](
        items=[entry for _, entry in page.items], next_cursor=page.next_cursor
    )


@router.get("/runs/{run_id}/waits", summary="A run's waits", response_model=list[Wait])
def run_waits(
    run_id: RunId,
    app: TetherApp,
    caller: Caller,
    status: Annotated[WaitStatus | None, Query(description="Only waits in this status.")] = None,
) -> list[Wait]:
    """Every question and approval request the run asked, open or resolved. Needs
    `runs.read`."""
    app.runs.get(caller, run_id)
    return app.runs.waits(caller, run_id=run_id, status=status)


@router.get("/runs/{run_id}/handoff", summary="A run's handoff", response_model=HandoffDocument)
def run_handoff(run_id: RunId, app: TetherApp, caller: Caller) -> HandoffDocument:
    """The handoff document for the next session: goal, completed steps, current blocker,
    next action and context, built from the run's durable state. Needs `runs.read`."""
    return app.runs.handoff_document(caller, run_id)


@router.get(
    "/runs/{run_id}/handoff.md",
    summary="A run's handoff as Markdown",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}},
)
def run_handoff_markdown(run_id: RunId, app: TetherApp, caller: Caller) -> PlainTextResponse:
    """The handoff document rendered as Markdown. Needs `runs.read`."""
    text = app.runs.handoff(caller, run_id)
    return PlainTextResponse(text, media_type="text/markdown")


@router.get("/runs/{run_id}/inbox", summary="A run's inbox", response_model=list[InboxMessage])
def run_inbox(run_id: RunId, app: TetherApp, caller: Caller) -> list[InboxMessage]:
    """Messages sent to the run, in order. Needs `runs.read`."""
    return app.inbox.messages(caller, run_id)


@router.post(
    "/runs/{run_id}/inbox",
    summary="Send a message to a run",
    status_code=201,
    response_model=InboxMessage,
    responses=error_responses(409),
)
def send_to_run(run_id: RunId, body: SendMessage, app: TetherApp, caller: Caller) -> InboxMessage:
    """Send new input to a running or waiting run; it reads it with `ctx.receive()`. A
    finished run is a conflict. Needs `runs.send` (agent, operator, admin)."""
    return app.inbox.send(caller, run_id, body.message)


@router.get("/waits", summary="List waits", response_model=Page[Wait])
def list_waits(
    app: TetherApp,
    caller: Caller,
    kind: Annotated[JournalKind | None, Query(description="interrupt or approval.")] = None,
    status: Annotated[WaitStatus, Query(description="The waits' status.")] = WaitStatus.OPEN,
    run_id: Annotated[str | None, Query(max_length=64, description="Only this run's.")] = None,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[Wait]:
    """Open questions (or resolved ones, with `status`) across the tenant's runs, oldest
    first. Needs `runs.read`."""
    waits = app.runs.waits(
        caller, kind=kind, status=status, run_id=run_id, after=text_after(cursor), limit=limit + 1
    )
    return page_of(waits, lambda wait: wait.wait_id, limit=limit)


@router.get("/waits/{wait_id}", summary="Get a wait", response_model=Wait)
def get_wait(wait_id: str, app: TetherApp, caller: Caller) -> Wait:
    """One question or approval request with its payload and resolution. Needs
    `runs.read`."""
    return app.runs.wait(caller, wait_id)


@router.post(
    "/waits/{wait_id}/answer",
    summary="Answer a wait",
    response_model=Run,
    responses=error_responses(409),
)
def answer_wait(wait_id: str, body: Answer, app: TetherApp, caller: Caller) -> Run:
    """Answer a clarification, an external dependency or a human review; the run goes
    back in the queue. Who may answer depends on the wait (docs/permissions.md): a
    clarification its addressee or an operator; a review an operator or approver who is
    not an agent and did not start the run. Approvals are decided under /approvals."""
    return app.runs.answer(caller, wait_id, body.answer)
