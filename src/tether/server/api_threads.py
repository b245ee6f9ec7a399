"""``/api/v1/threads``: conversation threads, their turns and summaries, and the working
context built from one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.context.models import BuiltContext
from tether.server.auth import Caller, TetherApp
from tether.server.pagination import Cursor, Limit, Page, after_number, paginate
from tether.server.problems import COMMON_ERRORS
from tether.threads.models import NewTurn, Summary, Thread, ThreadTail, Turn

router = APIRouter(tags=["threads"], responses=COMMON_ERRORS)


class NewThread(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(min_length=1, max_length=200, description="Whose conversation it is.")
    title: str = Field("", max_length=500)
    retention_days: int | None = Field(
        None, ge=1, le=36_500, description="Purge after this many days without a turn."
    )


class NewTurns(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: list[NewTurn] = Field(min_length=1, max_length=500, description="Appended in order.")


class Summarize(BaseModel):
    model_config = ConfigDict(extra="forbid")

    through_seq: int = Field(ge=1, le=2**62, description="The last turn the summary covers.")
    max_tokens: int = Field(400, ge=16, le=8000, description="The summary's length at most.")


class ContextRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget: int = Field(ge=64, le=1_000_000, description="Token budget of the context.")
    query: str | None = Field(
        None, max_length=4000, description="What to recall (default: the latest user turn)."
    )
    run_id: str | None = Field(None, max_length=64, description="Include this run's state.")


@router.post("/threads", summary="Create a thread", status_code=201, response_model=Thread)
def create_thread(body: NewThread, app: TetherApp, caller: Caller) -> Thread:
    """Start a conversation thread of a user. Needs `threads.write` (agent, operator,
    admin)."""
    return app.threads.create(
        caller, body.user_id, title=body.title, retention_days=body.retention_days
    )


@router.get("/threads", summary="List threads", response_model=Page[Thread])
def list_threads(
    app: TetherApp,
    caller: Caller,
    user_id: Annotated[str | None, Query(max_length=200, description="Only this user's.")] = None,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[Thread]:
    """The tenant's threads (or one user's), newest first. Needs `threads.read`."""
    threads = sorted(
        app.threads.all(caller, user_id=user_id, limit=10_000),
        key=lambda thread: thread.thread_id,
        reverse=True,
    )
    return paginate(
        threads, lambda thread: thread.thread_id, cursor=cursor, limit=limit, descending=True
    )


@router.post("/threads/retention", summary="Run thread retention", response_model=dict[str, int])
def retention_cycle(app: TetherApp, caller: Caller) -> dict[str, int]:
    """Purge the tenant's threads inactive past their retention, with their turns and
    summaries; threads under a legal hold are kept. Counts what happened. Needs
    `threads.maintain` (operator, admin)."""
    return app.threads.retention_cycle(caller)


@router.get("/threads/{thread_id}", summary="Get a thread", response_model=Thread)
def get_thread(thread_id: str, app: TetherApp, caller: Caller) -> Thread:
    """One thread and the number of its last turn. Needs `threads.read`."""
    return app.threads.get(caller, thread_id)


@router.get("/threads/{thread_id}/turns", summary="A thread's turns", response_model=Page[Turn])
def list_turns(
    thread_id: str, app: TetherApp, caller: Caller, cursor: Cursor = None, limit: Limit = 50
) -> Page[Turn]:
    """The thread's turns in order, as they were stored. Needs `threads.read`."""
    after = after_number(cursor)
    turns = app.threads.turns(caller, thread_id, from_seq=after + 1, limit=limit + 1)
    return paginate(turns, lambda turn: turn.seq, cursor=None, limit=limit)


@router.get("/threads/{thread_id}/tail", summary="A thread's tail", response_model=ThreadTail)
def tail(
    thread_id: str,
    app: TetherApp,
    caller: Caller,
    count: Annotated[int, Query(ge=1, le=100_000, description="How many latest turns.")] = 20,
) -> ThreadTail:
    """The thread, its latest summary and its `count` most recent turns (oldest first),
    read at one moment so the three agree: what a context is built from. Needs
    `threads.read`."""
    return app.threads.tail(caller, thread_id, count)


@router.get(
    "/threads/{thread_id}/refs/{ref}", summary="Turns with a reference", response_model=list[Turn]
)
def find_turns(thread_id: str, ref: str, app: TetherApp, caller: Caller) -> list[Turn]:
    """The thread's turns carrying reference `ref` (a tool call and its observation share
    one), in order; 404 when none does. Needs `threads.read`."""
    return app.threads.find_turns(caller, thread_id, ref)


@router.get("/turns/{turn_id}", summary="Get a turn", response_model=Turn)
def get_turn(turn_id: str, app: TetherApp, caller: Caller) -> Turn:
    """One turn by its id, in full: how an observation masked in a built context is read
    back. Needs `threads.read`."""
    return app.threads.get_turn(caller, turn_id)


@router.post(
    "/threads/{thread_id}/turns",
    summary="Append turns",
    status_code=201,
    response_model=list[Turn],
)
def append_turns(thread_id: str, body: NewTurns, app: TetherApp, caller: Caller) -> list[Turn]:
    """Append turns to the thread, in order; each gets the next sequence number. Needs
    `threads.write`."""
    return app.threads.append_many(caller, thread_id, body.turns)


@router.get(
    "/threads/{thread_id}/summaries",
    summary="A thread's summaries",
    response_model=list[Summary],
)
def list_summaries(thread_id: str, app: TetherApp, caller: Caller) -> list[Summary]:
    """The summaries stored beside the thread's turns, each with the range it covers.
    Needs `threads.read`."""
    return app.threads.summaries(caller, thread_id)


@router.post(
    "/threads/{thread_id}/summaries",
    summary="Summarize a thread",
    response_model=Summary | None,
)
def summarize(thread_id: str, body: Summarize, app: TetherApp, caller: Caller) -> Summary | None:
    """Summarize the turns after the latest summary up to `through_seq` and store the
    summary beside them (the turns stay); null when there is nothing new to summarize.
    Needs `threads.write`."""
    return app.threads.summarize(
        caller, thread_id, through_seq=body.through_seq, max_tokens=body.max_tokens
    )


@router.post(
    "/threads/{thread_id}/context",
    summary="Build a working context",
    response_model=BuiltContext,
)
def build_context(
    thread_id: str, body: ContextRequest, app: TetherApp, caller: Caller
) -> BuiltContext:
    """Assemble the thread's working context within a token budget: procedures, the
    summary head, recent turns, relevant memories and the run's state, with what was
    dropped or masked and why. Needs `threads.read`."""
    return app.context.build(
        caller, thread_id, budget=body.budget, query=body.query, run_id=body.run_id
    )
