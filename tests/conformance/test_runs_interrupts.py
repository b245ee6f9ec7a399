"""Each interrupt reason parks a run in exactly one status; timed ones resume by themselves."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, Harness, open_harness, open_wait
from tests.support import TestDatabase
from tether.runs import (
    END,
    InterruptReason,
    RunContext,
    RunStatus,
    WaitStatus,
    Workflow,
    WorkflowRegistry,
)

ANSWERED = {
    InterruptReason.CLARIFICATION_REQUIRED: RunStatus.WAITING_FOR_USER,
    InterruptReason.EXTERNAL_DEPENDENCY: RunStatus.PAUSED,
    InterruptReason.HUMAN_REVIEW: RunStatus.PAUSED,
}
TIMED = {
    InterruptReason.RATE_LIMITED: RunStatus.SCHEDULED,
    InterruptReason.SCHEDULED_RESUME: RunStatus.SCHEDULED,
}
DELAY = timedelta(minutes=15)


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class WaitState(BaseModel):
    got: Any = None
    done: bool = False


def interrupting(reason: InterruptReason) -> Workflow[WaitState]:
    wf: Workflow[WaitState] = Workflow(f"wait_{reason.value}", state=WaitState)

    @wf.node(start=True)
    def ask(ctx: RunContext, s: WaitState) -> str:
        when = None
        if reason in TIMED:
            when = datetime.fromisoformat(ctx.step("resume_at", lambda: ctx.now() + DELAY))
        s.got = ctx.interrupt(
            reason, f"waiting: {reason.value}", payload={"why": reason.value}, resume_at=when
        )
        return "finish"

    @wf.node
    def finish(ctx: RunContext, s: WaitState) -> str:
        s.done = True
        return END

    return wf


def test_every_reason_has_exactly_one_waiting_status() -> None:
    assert {reason: reason.status for reason in InterruptReason} == {
        **ANSWERED,
        **TIMED,
        InterruptReason.APPROVAL_REQUIRED: RunStatus.WAITING_FOR_APPROVAL,
        InterruptReason.CHILD_RUNS: RunStatus.WAITING_FOR_CHILDREN,
    }


@pytest.mark.parametrize("reason", list(ANSWERED), ids=lambda r: r.value)
def test_a_question_parks_the_run_until_it_is_answered(h: Harness, reason: InterruptReason) -> None:
    registry = WorkflowRegistry(interrupting(reason))
    run = h.app.runs.start(h.agent, registry.get(f"wait_{reason.value}"), WaitState())
    worker = h.executor(registry, "worker-1")

    parked = worker.execute(TENANT, run.run_id)

    assert parked.status is ANSWERED[reason]
    assert h.run(run.run_id).status is ANSWERED[reason]
    wait = open_wait(h, parked)
    assert (wait.reason, wait.message, wait.request) == (
        reason,
        f"waiting: {reason.value}",
        {"why": reason.value},
    )
    assert parked.resume_at is None
    h.clock.advance(timedelta(days=3))
    assert worker.execute_next() is None
    assert worker.execute(TENANT, run.run_id).status is ANSWERED[reason]

    h.app.runs.answer(h.operator, wait.wait_id, {"ok": reason.value})
    done = worker.execute(TENANT, run.run_id)

    assert done.status is RunStatus.COMPLETED
    assert h.state(run.run_id) == {"got": {"ok": reason.value}, "done": True}
    assert h.wait(wait.wait_id).status is WaitStatus.ANSWERED


@pytest.mark.parametrize("reason", list(TIMED), ids=lambda r: r.value)
def test_a_timed_interrupt_schedules_the_run_and_it_resumes_by_itself(
    h: Harness, reason: InterruptReason
) -> None:
    registry = WorkflowRegistry(interrupting(reason))
    run = h.app.runs.start(h.agent, registry.get(f"wait_{reason.value}"), WaitState())
    worker = h.executor(registry, "worker-1")
    resume_at = h.clock.now() + DELAY

    parked = worker.execute(TENANT, run.run_id)

    assert parked.status is RunStatus.SCHEDULED
    stored = h.run(run.run_id)
    assert (stored.status, stored.resume_at) == (RunStatus.SCHEDULED, resume_at)
    wait = open_wait(h, stored)
    assert (wait.reason, wait.resume_at) == (reason, resume_at)

    h.clock.advance(DELAY - timedelta(seconds=1))
    assert worker.execute_next() is None
    assert worker.execute(TENANT, run.run_id).status is RunStatus.SCHEDULED

    h.clock.advance(timedelta(seconds=1))
    done = worker.execute_next()

    assert done is not None
    assert (done.run_id, done.status) == (run.run_id, RunStatus.COMPLETED)
    assert h.state(run.run_id) == {"got": None, "done": True}


@pytest.mark.parametrize("reason", list(TIMED), ids=lambda r: r.value)
def test_a_run_that_resumed_by_itself_leaves_no_open_wait(
    h: Harness, reason: InterruptReason
) -> None:
    registry = WorkflowRegistry(interrupting(reason))
    run = h.app.runs.start(h.agent, registry.get(f"wait_{reason.value}"), WaitState())
    worker = h.executor(registry, "worker-1")
    wait = open_wait(h, worker.execute(TENANT, run.run_id))
    h.clock.advance(DELAY)

    assert worker.execute(TENANT, run.run_id).status is RunStatus.COMPLETED

    assert h.waits(run.run_id, status=WaitStatus.OPEN) == [], (
        "the completed run still lists its timed wait as an open question"
    )
    assert h.wait(wait.wait_id).status is not WaitStatus.OPEN


@pytest.mark.parametrize("reason", list(TIMED), ids=lambda r: r.value)
def test_an_operator_resume_ends_a_timed_wait_early(h: Harness, reason: InterruptReason) -> None:
    registry = WorkflowRegistry(interrupting(reason))
    run = h.app.runs.start(h.agent, registry.get(f"wait_{reason.value}"), WaitState())
    worker = h.executor(registry, "worker-1")
    assert worker.execute(TENANT, run.run_id).status is RunStatus.SCHEDULED
    h.clock.advance(timedelta(minutes=1))

    resumed = h.app.runbook.resume(h.operator, run.run_id, reason="the rate limit was lifted")
    assert resumed.status is RunStatus.QUEUED
    done = worker.execute(TENANT, run.run_id)

    assert done.status is RunStatus.COMPLETED, (
        f"resumed by an operator, the run is {done.status} again until {done.resume_at}"
    )
    assert h.waits(run.run_id, status=WaitStatus.OPEN) == []
