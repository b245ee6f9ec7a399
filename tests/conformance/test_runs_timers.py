"""Durable timers and wake-ups: a waiting run holds no worker, resumes when its time comes
on the injected clock (whichever worker is free fires it), and an idle worker is woken by
storage when work becomes runnable instead of waiting for its next poll."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.worker import Worker

THREE_DAYS = timedelta(days=3)


class Timed(BaseModel):
    outcome: str | None = None
    resumed_at: str | None = None


scheduled: Workflow[Timed] = Workflow("three_day_timer", state=Timed)


@scheduled.node(start=True)
def wait_three_days(ctx: RunContext, state: Timed) -> str:
    ctx.interrupt("scheduled_resume", "check again in three days", resume_at=ctx.now() + THREE_DAYS)
    state.outcome = "resumed"
    state.resumed_at = ctx.now().isoformat()
    return END


limited: Workflow[Timed] = Workflow("rate_limited_call", state=Timed)


@limited.node(start=True)
def call_after_limit(ctx: RunContext, state: Timed) -> str:
    ctx.interrupt("rate_limited", "the API said 429", resume_at=ctx.now() + timedelta(hours=1))
    state.outcome = "called"
    return END


approval: Workflow[Timed] = Workflow("three_day_approval", state=Timed)


@approval.node(start=True)
def ask_for_three_days(ctx: RunContext, state: Timed) -> str:
    decision = ctx.approval({"pay": 10}, rationale="pay the invoice", expires_in=THREE_DAYS)
    state.outcome = decision.status.value
    return END


soon: Workflow[Timed] = Workflow("half_second_timer", state=Timed)


@soon.node(start=True)
def wait_half_a_second(ctx: RunContext, state: Timed) -> str:
    ctx.interrupt(
        "scheduled_resume", "in half a second", resume_at=ctx.now() + timedelta(seconds=0.5)
    )
    state.outcome = "resumed"
    return END


REGISTRY = WorkflowRegistry(scheduled, limited, approval, soon)


def open_app(backend: TestDatabase, clock: FakeClock | None = None) -> Tether:
    app = Tether.open(backend.settings(), clock=clock)
    app.tenants.create("acme", admin="alice")
    alice = app.tenants.principal("acme", "alice")
    app.tenants.grant(alice, "bot", ["agent"])
    app.tenants.grant(alice, "carol", ["approver"])
    return app


def test_a_three_day_timer_holds_no_worker_and_fires_on_time(backend: TestDatabase) -> None:
    clock = FakeClock()
    with open_app(backend, clock) as app:
        bot = app.tenants.principal("acme", "bot")
        started = clock.now()
        run = app.runs.start(bot, scheduled, Timed())
        worker = Worker(app.executor(REGISTRY), app.runs)
        assert worker.run(until_idle=True) == 1
        waiting = app.runs.get(bot, run.run_id)
        assert waiting.status is RunStatus.SCHEDULED
        assert waiting.lease_owner is None and waiting.lease_expires_at is None
        with app.storage.system_transaction(write=False) as txn:
            assert txn.next_due() == started + THREE_DAYS

        clock.advance(THREE_DAYS - timedelta(seconds=1))
        assert worker.run(until_idle=True) == 0
        assert app.runs.get(bot, run.run_id).status is RunStatus.SCHEDULED

        clock.advance(timedelta(seconds=1))
        other = Worker(app.executor(REGISTRY), app.runs)
        assert other.run(until_idle=True) == 1
        done = app.runs.get(bot, run.run_id)
        assert done.status is RunStatus.COMPLETED
        assert app.runs.state(bot, run.run_id)["resumed_at"] == (started + THREE_DAYS).isoformat()


def test_a_rate_limited_run_is_retried_by_whichever_worker_is_free(
    backend: TestDatabase,
) -> None:
    clock = FakeClock()
    with open_app(backend, clock) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, limited, Timed())
        first = Worker(app.executor(REGISTRY, owner="first"), app.runs)
        second = Worker(app.executor(REGISTRY, owner="second"), app.runs)
        assert first.run(until_idle=True) == 1
        assert app.runs.get(bot, run.run_id).status is RunStatus.SCHEDULED
        clock.advance(timedelta(hours=1))
        assert second.run(until_idle=True) == 1
        assert app.runs.state(bot, run.run_id)["outcome"] == "called"
        claimed_by = [
            e.data["owner"] for e in app.runs.events(bot, run.run_id) if e.type == "run.claimed"
        ]
        assert claimed_by == ["first", "second"]


def test_an_approval_open_three_days_holds_no_worker_and_expires_on_time(
    backend: TestDatabase,
) -> None:
    clock = FakeClock()
    with open_app(backend, clock) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, approval, Timed())
        worker = Worker(app.executor(REGISTRY), app.runs)
        assert worker.run(until_idle=True) == 1
        waiting = app.runs.get(bot, run.run_id)
        assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
        assert waiting.lease_owner is None
        clock.advance(THREE_DAYS - timedelta(minutes=1))
        assert worker.run(until_idle=True) == 0
        clock.advance(timedelta(minutes=1))
        assert worker.run(until_idle=True) == 1
        assert app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED
        assert app.runs.state(bot, run.run_id)["outcome"] == "expired"


@contextmanager
def idle_worker(app: Tether) -> Iterator[Worker]:
    """A worker on a thread of its own whose poll fallback is an hour: only a wake-up (or a
    timer falling due) gets it to look for work while the test runs."""
    wakeups = app.storage.wakeups()
    worker = Worker(app.executor(REGISTRY), app.runs, poll_s=3600.0, wakeups=wakeups)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop.set()
        thread.join(timeout=30)
        wakeups.close()
        assert not thread.is_alive()


def eventually(check: Callable[[], bool], *, within_s: float = 30.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_an_idle_worker_is_woken_by_a_new_run_and_by_a_decision(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        carol = app.tenants.principal("acme", "carol")
        with idle_worker(app):
            time.sleep(0.2)  # let the worker go idle before the run exists
            run = app.runs.start(bot, approval, Timed())
            assert eventually(
                lambda: app.runs.get(bot, run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
            )
            (wait,) = app.runs.waits(bot, run_id=run.run_id)
            app.runs.decide(carol, wait.wait_id, approve=True)
            assert eventually(lambda: app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED)
        assert app.runs.state(bot, run.run_id)["outcome"] == "approved"


def test_an_idle_worker_wakes_when_a_timer_falls_due(backend: TestDatabase) -> None:
    with open_app(backend) as app:
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, soon, Timed())
        with idle_worker(app):
            assert eventually(lambda: app.runs.get(bot, run.run_id).status is RunStatus.COMPLETED)
        assert app.runs.state(bot, run.run_id)["outcome"] == "resumed"
