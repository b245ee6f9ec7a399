"""Two workers race for one run: the one whose lease ran out commits nothing afterwards.

Worker A is held inside a step (a thread blocked on an Event) until its lease has run
out; worker B takes the run over and finishes it; then A is released and must stop at its
next write without a trace: no journal entry, checkpoint, event or run-row change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import PAST_LEASE, TENANT, CaseService, Harness, open_harness
from tests.support import TestDatabase
from tether.runs import END, Run, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.models import JournalKind

TIMEOUT_S = 10.0


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class ReviewState(BaseModel):
    summary: str | None = None
    note: dict[str, Any] | None = None


class Gate:
    """Blocks the first caller of ``summarise`` until released; later callers pass."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def summarise(self) -> str:
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            if not self.release.wait(TIMEOUT_S):
                raise RuntimeError("the test never released worker A")
            return "summary by worker A"
        return "summary by worker B"


def racing_workflow(gate: Gate, service: CaseService, then: str) -> Workflow[ReviewState]:
    wf: Workflow[ReviewState] = Workflow("race", state=ReviewState)

    @wf.node
    def summarise(ctx: RunContext, s: ReviewState) -> str:
        s.summary = ctx.step("summarise", gate.summarise)
        if then == "effect":
            note = {"text": s.summary}
            s.note = ctx.effect(
                "create_case_note",
                lambda key: service.call(key, "create_case_note", note),
                request=note,
            )
        return "close"

    @wf.node
    def close(ctx: RunContext, s: ReviewState) -> str:
        return END

    return wf


@pytest.mark.parametrize("then", ["effect", "checkpoint"])
def test_the_worker_that_lost_its_lease_commits_nothing(h: Harness, then: str) -> None:
    gate = Gate()
    service = CaseService(recorded=h.recorded)
    registry = WorkflowRegistry(racing_workflow(gate, service, then))
    run = h.app.runs.start(h.agent, registry.get("race"), ReviewState())
    worker_a = h.executor(registry, "worker-a")
    result: dict[str, Any] = {}

    def run_a() -> None:
        try:
            result["run"] = worker_a.execute(TENANT, run.run_id)
        except BaseException as exc:  # reported to the test thread below
            result["error"] = exc

    thread = threading.Thread(target=run_a, name="worker-a")
    thread.start()
    try:
        assert gate.entered.wait(TIMEOUT_S), "worker A never reached the step"
        assert h.run(run.run_id).lease_owner == "worker-a"

        h.clock.advance(PAST_LEASE)
        finished = h.executor(registry, "worker-b").execute(TENANT, run.run_id)
        assert finished.status is RunStatus.COMPLETED
        after_b = h.snapshot(run.run_id)
    finally:
        gate.release.set()
        thread.join(TIMEOUT_S)
    assert not thread.is_alive(), "worker A did not stop"

    assert "error" not in result, f"worker A raised {result.get('error')!r}"
    assert isinstance(result["run"], Run)
    assert h.snapshot(run.run_id) == after_b
    stored = h.run(run.run_id)
    assert stored.status is RunStatus.COMPLETED
    assert stored.updated_by == "worker-b"
    assert h.state(run.run_id)["summary"] == "summary by worker B"
    steps = [e for e in h.journal(run.run_id) if e.kind is JournalKind.STEP]
    assert [e.result for e in steps] == ['"summary by worker B"']
    claims = [e.data["owner"] for e in h.events(run.run_id) if e.type == "run.claimed"]
    assert claims == ["worker-a", "worker-b"]
    if then == "effect":
        assert list(service.calls.values()) == [1]
        assert service.late_calls == []
        assert h.state(run.run_id)["note"]["text"] == "summary by worker B"
    else:
        assert service.calls == {}


def test_a_worker_that_lost_its_lease_after_a_cancel_request_returns_quietly(
    h: Harness,
) -> None:
    """A saw the cancel request in its last commit, then lost the run to B, which cancelled
    it; A's attempt to record the cancel itself must stop quietly, like any lost lease."""
    gate = threading.Event()
    blocked = threading.Event()
    service = CaseService()
    wf: Workflow[ReviewState] = Workflow("cancel_race", state=ReviewState)

    def send_and_get_cancelled(key: str, run_id: str) -> dict[str, Any]:
        h.app.runbook.cancel(h.operator, run_id, reason="customer withdrew")
        return service.call(key, "create_case_note", {})

    @wf.node
    def work(ctx: RunContext, s: ReviewState) -> str:
        s.note = ctx.effect(
            "create_case_note", lambda key: send_and_get_cancelled(key, ctx.run_id), request={}
        )
        blocked.set()
        if not gate.wait(TIMEOUT_S):
            raise RuntimeError("the test never released worker A")
        s.summary = ctx.step("summarise", lambda: "summary")
        return END

    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, ReviewState())
    result: dict[str, Any] = {}

    def run_a() -> None:
        try:
            result["run"] = h.executor(registry, "worker-a").execute(TENANT, run.run_id)
        except BaseException as exc:  # reported to the test thread below
            result["error"] = exc

    thread = threading.Thread(target=run_a, name="worker-a")
    thread.start()
    try:
        assert blocked.wait(TIMEOUT_S), "worker A never got past its effect"
        h.clock.advance(PAST_LEASE)
        cancelled = h.executor(registry, "worker-b").execute(TENANT, run.run_id)
        assert cancelled.status is RunStatus.CANCELLED
        after_b = h.snapshot(run.run_id)
    finally:
        gate.set()
        thread.join(TIMEOUT_S)
    assert not thread.is_alive(), "worker A did not stop"

    assert "error" not in result, f"worker A raised {result.get('error')!r}"
    assert h.snapshot(run.run_id) == after_b
    assert list(service.calls.values()) == [1]
