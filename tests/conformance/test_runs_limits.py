"""Concurrency limits per tenant and per workflow, priorities, and several workers of one
process (``tether worker --concurrency N``) sharing the database."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import Tether
from tether.errors import InvalidInput, PermissionDenied
from tether.runs import END, Run, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.worker import Worker, run_workers


class Job(BaseModel):
    name: str = ""


class Gate:
    """Holds nodes inside their run until released, counting how many are inside at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0
        self.entered = threading.Semaphore(0)
        self.order: list[str] = []

    def hold(self, name: str) -> None:
        with self.lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            self.order.append(name)
        self.entered.release()
        self.release.wait(timeout=60)
        with self.lock:
            self.inside -= 1


GATE = Gate()

gated: Workflow[Job] = Workflow("gated", state=Job)


@gated.node(start=True)
def hold(ctx: RunContext, state: Job) -> str:
    GATE.hold(state.name)
    return END


one_at_a_time: Workflow[Job] = Workflow("one_at_a_time", state=Job, max_running=1)


@one_at_a_time.node(start=True)
def hold_alone(ctx: RunContext, state: Job) -> str:
    GATE.hold(state.name)
    return END


quick: Workflow[Job] = Workflow("quick", state=Job)


@quick.node(start=True)
def record(ctx: RunContext, state: Job) -> str:
    GATE.order.append(state.name)
    return END


REGISTRY = WorkflowRegistry(gated, one_at_a_time, quick)


@pytest.fixture
def gate() -> Iterator[Gate]:
    global GATE
    GATE = Gate()
    yield GATE
    GATE.release.set()


def open_app(backend: TestDatabase) -> Tether:
    app = Tether.open(backend.settings())
    for tenant in ("acme", "globex"):
        app.tenants.create(tenant, admin="alice")
        alice = app.tenants.principal(tenant, "alice")
        app.tenants.grant(alice, "bot", ["agent"])
    return app


@contextmanager
def background(worker: Worker) -> Iterator[threading.Thread]:
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        GATE.release.set()
        worker.stop.set()
        thread.join(timeout=60)


def status(app: Tether, tenant: str, run: Run) -> RunStatus:
    return app.runs.get(app.tenants.principal(tenant, "bot"), run.run_id).status


def test_a_tenant_at_its_limit_waits_while_other_tenants_run(
    backend: TestDatabase, gate: Gate
) -> None:
    with open_app(backend) as app:
        alice = app.tenants.principal("acme", "alice")
        bot = app.tenants.principal("acme", "bot")
        app.runs.set_concurrency_limit(alice, 1)
        assert app.runs.concurrency_limit(bot) == 1
        first = app.runs.start(bot, gated, Job(name="acme-1"))
        second = app.runs.start(bot, gated, Job(name="acme-2"))
        other = app.runs.start(app.tenants.principal("globex", "bot"), quick, Job(name="globex"))
        holder = Worker(app.executor(REGISTRY), app.runs, poll_s=0.05)
        with background(holder):
            assert gate.entered.acquire(timeout=30)
            executor = app.executor(REGISTRY)
            assert executor.execute_next() is not None  # globex has no limit
            assert status(app, "globex", other) is RunStatus.COMPLETED
            assert executor.execute_next() is None  # acme's one slot is taken
            assert executor.execute("acme", second.run_id).status is RunStatus.QUEUED
            gate.release.set()
        assert Worker(app.executor(REGISTRY), app.runs).run(until_idle=True) == 1
        assert status(app, "acme", first) is RunStatus.COMPLETED
        assert status(app, "acme", second) is RunStatus.COMPLETED
        app.runs.set_concurrency_limit(alice, None)
        assert app.runs.concurrency_limit(bot) is None


def test_a_workflow_limit_holds_across_tenants(backend: TestDatabase, gate: Gate) -> None:
    with open_app(backend) as app:
        acme = app.runs.start(app.tenants.principal("acme", "bot"), one_at_a_time, Job(name="a"))
        globex = app.runs.start(
            app.tenants.principal("globex", "bot"), one_at_a_time, Job(name="g")
        )
        holder = Worker(app.executor(REGISTRY), app.runs, poll_s=0.05)
        with background(holder):
            assert gate.entered.acquire(timeout=30)
            assert app.executor(REGISTRY).execute_next() is None
            gate.release.set()
        assert Worker(app.executor(REGISTRY), app.runs).run(until_idle=True) == 1
        assert status(app, "acme", acme) is RunStatus.COMPLETED
        assert status(app, "globex", globex) is RunStatus.COMPLETED


def test_many_workers_never_exceed_a_tenant_limit(backend: TestDatabase, gate: Gate) -> None:
    with open_app(backend) as app:
        app.runs.set_concurrency_limit(app.tenants.principal("acme", "alice"), 2)
        bot = app.tenants.principal("acme", "bot")
        runs = [app.runs.start(bot, gated, Job(name=f"r{i}")) for i in range(6)]
        workers = [Worker(app.executor(REGISTRY), app.runs, poll_s=0.02) for _ in range(4)]
        done: list[int] = []
        thread = threading.Thread(target=lambda: done.append(run_workers(workers)), daemon=True)
        thread.start()
        for _ in range(2):
            assert gate.entered.acquire(timeout=30)
        assert not gate.entered.acquire(timeout=0.5)
        gate.release.set()
        for _ in range(4):
            assert gate.entered.acquire(timeout=30)
        for worker in workers:
            worker.stop.set()
        thread.join(timeout=60)
        assert done == [6]
        assert gate.most_inside == 2
        assert all(status(app, "acme", run) is RunStatus.COMPLETED for run in runs)


def test_higher_priority_runs_are_claimed_first(backend: TestDatabase, gate: Gate) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        app.runs.start(bot, quick, Job(name="low"), priority=-5)
        app.runs.start(bot, quick, Job(name="normal"))
        app.runs.start(bot, quick, Job(name="urgent"), priority=10)
        app.runs.start(bot, quick, Job(name="normal-later"))
        assert Worker(app.executor(REGISTRY), app.runs).run(until_idle=True) == 4
        assert gate.order == ["urgent", "normal", "normal-later", "low"]


def test_bad_limits_and_priorities_are_refused(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        alice = app.tenants.principal("acme", "alice")
        bot = app.tenants.principal("acme", "bot")
        with pytest.raises(InvalidInput):
            app.runs.set_concurrency_limit(alice, 0)
        with pytest.raises(PermissionDenied):
            app.runs.set_concurrency_limit(bot, 3)
        with pytest.raises(InvalidInput):
            app.runs.start(bot, quick, Job(), priority=1001)
        with pytest.raises(InvalidInput):
            Workflow("broken", state=Job, max_running=0)
        assert app.runs.concurrency_limit(bot) is None
        assert app.runs.all(bot) == []
