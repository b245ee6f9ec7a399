"""Retries with backoff, cancellation, max_steps and deadlines."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, CaseService, Harness, open_harness, open_wait
from tests.support import TestDatabase
from tether.errors import Conflict, PermissionDenied
from tether.runs import (
    END,
    InterruptReason,
    RetryPolicy,
    RunContext,
    RunStatus,
    WaitStatus,
    Workflow,
    WorkflowRegistry,
)


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class FetchState(BaseModel):
    ticket: dict[str, Any] | None = None
    policy: str | None = None


def flaky_workflow(service: CaseService, failures: int) -> Workflow[FetchState]:
    """Opens a ticket, then fetches a policy that fails ``failures`` times."""
    wf: Workflow[FetchState] = Workflow("flaky", state=FetchState)
    attempts = {"n": 0}

    @wf.node(retry=RetryPolicy(max_attempts=3, backoff_s=10, multiplier=2, jitter=0))
    def fetch(ctx: RunContext, s: FetchState) -> str:
        s.ticket = ctx.effect(
            "open_ticket",
            lambda key: service.call(key, "open_ticket", {}),
            request={"ticket": "policy lookup"},
        )
        attempts["n"] += 1
        if attempts["n"] <= failures:
            raise ConnectionError(f"policy service down (attempt {attempts['n']})")
        s.policy = "P-7"
        return END

    return wf


def test_a_node_that_fails_twice_is_retried_after_its_backoff_and_completes(
    h: Harness,
) -> None:
    service = CaseService(recorded=h.recorded)
    registry = WorkflowRegistry(flaky_workflow(service, failures=2))
    run = h.app.runs.start(h.agent, registry.get("flaky"), FetchState())
    worker = h.executor(registry, "worker-1")

    first = worker.execute(TENANT, run.run_id)
    assert first.status is RunStatus.SCHEDULED
    assert first.resume_at == h.clock.now() + timedelta(seconds=10)
    assert first.attempt == 1
    assert "attempt 1" in (first.error or "")

    h.clock.advance(timedelta(seconds=9))
    assert worker.execute(TENANT, run.run_id).status is RunStatus.SCHEDULED
    assert worker.execute_next() is None
    assert h.run(run.run_id).attempt == 1

    h.clock.advance(timedelta(seconds=1))
    second = worker.execute(TENANT, run.run_id)
    assert second.status is RunStatus.SCHEDULED
    assert second.resume_at == h.clock.now() + timedelta(seconds=20)
    assert second.attempt == 2

    h.clock.advance(timedelta(seconds=19))
    assert worker.execute_next() is None
    h.clock.advance(timedelta(seconds=1))
    done = worker.execute_next()

    assert done is not None
    assert done.status is RunStatus.COMPLETED
    assert done.error is None
    assert h.state(run.run_id)["policy"] == "P-7"
    assert list(service.calls.values()) == [1], "the retry repeated the recorded effect"
    assert service.late_calls == []
    types = h.event_types(run.run_id)
    assert types.count("node.failed") == 2
    retries = [e.data["attempt"] for e in h.events(run.run_id) if e.type == "node.retry_scheduled"]
    assert retries == [2, 3]


def test_a_node_that_fails_every_attempt_ends_the_run_failed(h: Harness) -> None:
    service = CaseService()
    registry = WorkflowRegistry(flaky_workflow(service, failures=99))
    run = h.app.runs.start(h.agent, registry.get("flaky"), FetchState())
    worker = h.executor(registry, "worker-1")

    statuses = []
    for _ in range(3):
        statuses.append(worker.execute(TENANT, run.run_id).status)
        h.clock.advance(timedelta(minutes=5))

    assert statuses == [RunStatus.SCHEDULED, RunStatus.SCHEDULED, RunStatus.FAILED]
    failed = h.run(run.run_id)
    assert failed.status is RunStatus.FAILED
    assert failed.error == "ConnectionError: policy service down (attempt 3)"
    assert failed.lease_owner is None
    last = h.events(run.run_id)[-1]
    assert (last.type, last.data) == ("run.failed", {"node": "fetch", "attempts": 3})
    assert worker.execute(TENANT, run.run_id).status is RunStatus.FAILED
    assert list(service.calls.values()) == [1]


class AskState(BaseModel):
    answer: str | None = None
    sent: dict[str, Any] | None = None


def ask_then_send(service: CaseService) -> Workflow[AskState]:
    wf: Workflow[AskState] = Workflow("ask_then_send", state=AskState)

    @wf.node(start=True)
    def ask(ctx: RunContext, s: AskState) -> str:
        s.answer = ctx.interrupt(InterruptReason.CLARIFICATION_REQUIRED, "which address?")
        return "send"

    @wf.node
    def send(ctx: RunContext, s: AskState) -> str:
        s.sent = ctx.effect(
            "send_letter",
            lambda key: service.call(key, "send_letter", {"to": s.answer}),
            request={"to": s.answer},
        )
        return END

    return wf


def test_cancelling_a_waiting_run_cancels_it_and_its_open_wait_at_once(h: Harness) -> None:
    service = CaseService()
    registry = WorkflowRegistry(ask_then_send(service))
    run = h.app.runs.start(h.agent, registry.get("ask_then_send"), AskState())
    worker = h.executor(registry, "worker-1")
    wait = open_wait(h, worker.execute(TENANT, run.run_id))
    with pytest.raises(PermissionDenied):
        h.app.runbook.cancel(h.agent, run.run_id, reason="customer withdrew")

    cancelled = h.app.runbook.cancel(h.operator, run.run_id, reason="customer withdrew")

    assert cancelled.status is RunStatus.CANCELLED
    assert h.run(run.run_id).status is RunStatus.CANCELLED
    stored = h.wait(wait.wait_id)
    assert stored.status is WaitStatus.CANCELLED
    assert stored.resolved_by == h.operator.principal_id
    assert h.waits(run.run_id, status=WaitStatus.OPEN) == []
    assert h.events(run.run_id)[-1].type == "run.cancelled"
    with pytest.raises(Conflict):
        h.app.runs.answer(h.operator, wait.wait_id, "12 Main St")
    assert worker.execute(TENANT, run.run_id).status is RunStatus.CANCELLED
    assert service.calls == {}
    with pytest.raises(Conflict):
        h.app.runbook.cancel(h.operator, run.run_id, reason="again")


class WorkState(BaseModel):
    checked: str | None = None
    sent: dict[str, Any] | None = None


@pytest.mark.parametrize("effect_in", ["same_node", "next_node"])
def test_cancelling_a_running_run_stops_it_before_its_next_effect(
    h: Harness, effect_in: str
) -> None:
    service = CaseService()
    wf: Workflow[WorkState] = Workflow("cancel_me", state=WorkState)
    seen: dict[str, Any] = {}

    def cancel_from_outside(run_id: str) -> str:
        seen["returned"] = h.app.runbook.cancel(h.operator, run_id, reason="customer withdrew")
        return "checked"

    def send(ctx: RunContext, s: WorkState) -> None:
        s.sent = ctx.effect(
            "send_letter", lambda key: service.call(key, "send_letter", {}), request={}
        )

    @wf.node(start=True)
    def check(ctx: RunContext, s: WorkState) -> str:
        s.checked = ctx.step("check", lambda: cancel_from_outside(ctx.run_id))
        if effect_in == "same_node":
            send(ctx, s)
        return "act"

    @wf.node
    def act(ctx: RunContext, s: WorkState) -> str:
        send(ctx, s)
        return END

    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, WorkState())

    result = h.executor(registry, "worker-1").execute(TENANT, run.run_id)

    assert seen["returned"].status is RunStatus.RUNNING
    assert seen["returned"].cancel_requested
    assert result.status is RunStatus.CANCELLED
    stored = h.run(run.run_id)
    assert stored.status is RunStatus.CANCELLED
    assert stored.lease_owner is None
    assert service.calls == {}
    types = h.event_types(run.run_id)
    assert "effect.intent" not in types
    (cancelled,) = [e for e in h.events(run.run_id) if e.type == "run.cancelled"]
    note = h.app.notes.digest(TENANT, "customer withdrew")
    assert cancelled.data == {"reason": note}, "the reason is cited by digest, not as text"
    assert stored.cancel_reason == note
    assert h.app.notes.read(h.operator, note) == "customer withdrew"


def test_max_steps_stops_a_run_that_loops_forever(h: Harness) -> None:
    wf: Workflow[WorkState] = Workflow("spin", state=WorkState)

    @wf.node
    def spin(ctx: RunContext, s: WorkState) -> str:
        return "spin"

    run = h.app.runs.start(h.agent, wf, WorkState(), max_steps=5)

    result = h.executor(WorkflowRegistry(wf), "worker-1").execute(TENANT, run.run_id)

    assert result.status is RunStatus.FAILED
    assert result.error == "max_steps (5) reached"
    stored = h.run(run.run_id)
    assert (stored.status, stored.steps) == (RunStatus.FAILED, 5)
    assert h.events(run.run_id)[-1].data == {"reason": "max_steps"}


def test_a_run_past_its_deadline_fails_without_running_more_nodes(h: Harness) -> None:
    service = CaseService()
    registry = WorkflowRegistry(ask_then_send(service))
    run = h.app.runs.start(
        h.agent,
        registry.get("ask_then_send"),
        AskState(),
        deadline=h.clock.now() + timedelta(hours=1),
    )
    worker = h.executor(registry, "worker-1")
    wait = open_wait(h, worker.execute(TENANT, run.run_id))

    h.clock.advance(timedelta(hours=1, seconds=1))
    h.app.runs.answer(h.operator, wait.wait_id, "12 Main St")
    result = worker.execute(TENANT, run.run_id)

    assert result.status is RunStatus.FAILED
    assert result.error == "deadline passed"
    assert h.run(run.run_id).status is RunStatus.FAILED
    assert h.events(run.run_id)[-1].data == {"reason": "deadline"}
    assert service.calls == {}
