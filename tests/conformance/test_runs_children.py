"""Child runs: a node starts runs and waits durably for all, any, or a count of them;
children inherit tenant and principal, run one at a time unless the node allows them in
parallel, are cancelled with their parent, and their results land in the parent's
journal, through crashes of the workers running them."""

from __future__ import annotations

import contextlib
import threading
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import InvalidInput
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.models import JournalKind, JournalStatus
from tether.runs.worker import Worker, run_workers


class Task(BaseModel):
    name: str = ""
    fail: bool = False
    crash: bool = False
    result: str | None = None


class Crash(BaseException):
    """A worker killed mid-node: nothing in the engine catches it."""


class Tracker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0
        self.crashes_left = 1
        self.barrier: threading.Barrier | None = None


TRACK = Tracker()

child: Workflow[Task] = Workflow("child", state=Task)


@child.node(start=True)
def work(ctx: RunContext, state: Task) -> str:
    with TRACK.lock:
        TRACK.inside += 1
        TRACK.most_inside = max(TRACK.most_inside, TRACK.inside)
    try:
        if TRACK.barrier is not None:
            TRACK.barrier.wait(timeout=30)
        if state.crash and TRACK.crashes_left:
            TRACK.crashes_left -= 1
            raise Crash()
        if state.fail:
            raise RuntimeError(f"{state.name} failed")
        state.result = state.name.upper()
    finally:
        with TRACK.lock:
            TRACK.inside -= 1
    return END


class Plan(BaseModel):
    names: list[str] = []
    wait: Any = "all"
    parallel: bool = False
    fail: list[str] = []
    crash: list[str] = []
    results: list[dict[str, Any]] = []


parent: Workflow[Plan] = Workflow("parent", state=Plan)


@parent.node(start=True)
def delegate(ctx: RunContext, state: Plan) -> str:
    tasks = [Task(name=n, fail=n in state.fail, crash=n in state.crash) for n in state.names]
    state.results = ctx.children.start(child, tasks, wait=state.wait, parallel=state.parallel)
    return END


REGISTRY = WorkflowRegistry(parent, child)


@pytest.fixture(autouse=True)
def tracker() -> None:
    global TRACK
    TRACK = Tracker()


def open_app(backend: TestDatabase, clock: FakeClock | None = None) -> Tether:
    app = Tether.open(backend.settings(), clock=clock)
    app.tenants.create("acme", admin="alice")
    alice = app.tenants.principal("acme", "alice")
    app.tenants.grant(alice, "bot", ["agent"])
    app.tenants.grant(alice, "ops", ["operator"])
    return app


def test_a_parent_waits_for_all_children_and_gets_their_results(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, parent, Plan(names=["a", "b", "c"]))
        workers = [Worker(app.executor(REGISTRY), app.runs) for _ in range(3)]
        run_workers(workers, until_idle=True)
        assert app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED
        results = app.runs.state(bot, run.run_id)["results"]
        assert [r["status"] for r in results] == ["completed"] * 3
        assert [r["state"]["result"] for r in results] == ["A", "B", "C"]
        assert TRACK.most_inside == 1  # one child at a time
        children = [app.runs.get(bot, r["run_id"]) for r in results]
        assert {(c.tenant_id, c.created_by, c.parent_run_id) for c in children} == {
            ("acme", "bot", run.run_id)
        }
        (entry,) = [e for e in app.runs.journal(bot, run.run_id) if e.name == "children:child@1"]
        assert entry.kind is JournalKind.INTERRUPT and entry.status is JournalStatus.DONE
        events = [e.type for e in app.runs.events(bot, run.run_id)]
        assert "children.started" in events and "wait.answered" in events


def test_parallel_children_run_at_once(backend: TestDatabase) -> None:
    TRACK.barrier = threading.Barrier(3)
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, parent, Plan(names=["a", "b", "c"], parallel=True))
        workers = [Worker(app.executor(REGISTRY), app.runs, poll_s=0.02) for _ in range(3)]
        thread = threading.Thread(target=run_workers, args=(workers,), daemon=True)
        thread.start()
        try:
            deadline = threading.Event()
            for _ in range(1500):
                if app.runs.get(bot, run.run_id).status.finished:
                    break
                deadline.wait(0.02)
        finally:
            for worker in workers:
                worker.stop.set()
            thread.join(timeout=60)
        assert app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED
        assert TRACK.most_inside == 3


def test_any_resumes_on_the_first_child_and_cancels_the_rest(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, parent, Plan(names=["a", "b", "c"], wait="any"))
        Worker(app.executor(REGISTRY), app.runs).run(until_idle=True)
        assert app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED
        results = app.runs.state(bot, run.run_id)["results"]
        assert [r["status"] for r in results] == ["completed", "queued", "queued"]
        statuses = [app.runs.get(bot, r["run_id"]).status for r in results]
        assert statuses == [RunStatus.COMPLETED, RunStatus.CANCELLED, RunStatus.CANCELLED]


def test_a_count_counts_failed_children_as_finished(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        plan = Plan(names=["a", "b", "c"], wait=2, fail=["a"])
        run = app.runs.start(bot, parent, plan)
        Worker(app.executor(REGISTRY), app.runs).run(until_idle=True)
        results = app.runs.state(bot, run.run_id)["results"]
        assert [r["status"] for r in results] == ["failed", "completed", "queued"]
        assert results[0]["error"] and "a failed" in results[0]["error"]
        assert results[1]["state"]["result"] == "B"


def test_cancelling_the_parent_cancels_its_children(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        ops = app.tenants.principal("acme", "ops")
        run = app.runs.start(bot, parent, Plan(names=["a", "b"]))
        executor = app.executor(REGISTRY)
        assert executor.execute("acme", run.run_id).status is RunStatus.WAITING_FOR_CHILDREN
        (wait,) = app.runs.waits(bot, run_id=run.run_id)
        children = wait.request["children"]
        with pytest.raises(InvalidInput):
            app.runs.answer(ops, wait.wait_id, "done")
        app.runbook.cancel(ops, run.run_id, reason="not needed")
        assert app.runs.get(bot, run.run_id).status is RunStatus.CANCELLED
        assert [app.runs.get(bot, c).status for c in children] == [RunStatus.CANCELLED] * 2
        assert Worker(executor, app.runs).run(until_idle=True) == 0


def test_crashes_while_children_run_lose_nothing(backend: TestDatabase) -> None:
    clock = FakeClock()
    with open_app(backend, clock) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, parent, Plan(names=["a", "b"], crash=["a"]))
        first = app.executor(REGISTRY, owner="first")
        assert first.execute("acme", run.run_id).status is RunStatus.WAITING_FOR_CHILDREN
        (wait,) = app.runs.waits(bot, run_id=run.run_id)
        a, b = wait.request["children"]
        with contextlib.suppress(Crash):
            first.execute("acme", a)  # the worker running child a dies mid-node
        assert app.runs.get(bot, a).status is RunStatus.RUNNING
        clock.advance(timedelta(minutes=2))
        second = app.executor(REGISTRY, owner="second")
        assert second.execute("acme", a).status is RunStatus.COMPLETED
        # The worker that finished b dies before it settles the parent: no Worker loop here.
        assert second.execute("acme", b).status is RunStatus.COMPLETED
        assert app.runs.get(bot, run.run_id).status is RunStatus.WAITING_FOR_CHILDREN
        assert Worker(app.executor(REGISTRY, owner="third"), app.runs).run(until_idle=True) == 1
        assert app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED
        results = app.runs.state(bot, run.run_id)["results"]
        assert [r["state"]["result"] for r in results] == ["A", "B"]


def test_bad_child_requests_start_nothing(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        for plan in (Plan(names=[]), Plan(names=["a"], wait=2), Plan(names=["a"], wait="most")):
            run = app.runs.start(bot, parent, plan)
            assert app.executor(REGISTRY).execute("acme", run.run_id).status is RunStatus.FAILED
        assert [r.workflow for r in app.runs.all(bot)] == ["parent"] * 3
