"""A node visited again in a loop gets new effect keys; a crash in one visit spares the others."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import (
    PAST_LEASE,
    TENANT,
    CaseService,
    Crash,
    FaultPlan,
    Harness,
    open_harness,
)
from tests.support import TestDatabase
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.claim import idempotency_key

BOUNDARIES_PER_VISIT = [
    "before_intent",
    "after_intent",
    "after_effect",
    "after_result",
    "before_checkpoint",
    "after_checkpoint",
]


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class ReminderState(BaseModel):
    rounds: int = 0
    sent: list[dict[str, Any]] = []


def reminder_loop(service: CaseService, quotes: Counter[int]) -> Workflow[ReminderState]:
    """One node that sends a reminder per visit and loops on itself three times."""
    wf: Workflow[ReminderState] = Workflow("reminders", state=ReminderState)

    def quote(visit: int) -> int:
        quotes[visit] += 1
        return visit * 10 + quotes[visit]

    @wf.node
    def remind(ctx: RunContext, s: ReminderState) -> str:
        s.rounds += 1
        price = ctx.step("quote", lambda: quote(ctx.visit))
        request = {"round": s.rounds, "price": price}
        s.sent.append(
            ctx.effect(
                "send_reminder",
                lambda key: service.call(key, "send_reminder", request),
                request=request,
                retry_safe=True,
            )
        )
        return "remind" if s.rounds < 3 else END

    return wf


def finish(h: Harness, registry: WorkflowRegistry, run_id: str, plan: FaultPlan) -> list[str]:
    """Execute to the end, crashing where the plan says; the workers used."""
    owners = ["worker-1"]
    for _ in range(5):
        try:
            run = h.executor(registry, owners[-1], faults=plan).execute(TENANT, run_id)
        except Crash:
            h.clock.advance(PAST_LEASE)
            owners.append(f"worker-{len(owners) + 1}")
            continue
        assert run.status is RunStatus.COMPLETED, run.error
        return owners
    pytest.fail("the run did not finish")


def test_each_visit_of_a_looping_node_performs_its_effect_under_its_own_key(
    h: Harness,
) -> None:
    service = CaseService(recorded=h.recorded)
    quotes: Counter[int] = Counter()
    registry = WorkflowRegistry(reminder_loop(service, quotes))
    run = h.app.runs.start(h.agent, registry.get("reminders"), ReminderState())

    finish(h, registry, run.run_id, FaultPlan())

    keys = [idempotency_key(TENANT, run.run_id, "remind", v, 2, "send_reminder") for v in (1, 2, 3)]
    assert service.order == keys
    assert service.calls == Counter({key: 1 for key in keys})
    assert [r["round"] for r in h.state(run.run_id)["sent"]] == [1, 2, 3]
    assert h.run(run.run_id).visits == {"remind": 3}
    assert dict(quotes) == {1: 1, 2: 1, 3: 1}


@pytest.mark.parametrize("point", BOUNDARIES_PER_VISIT)
def test_a_crash_in_the_second_visit_repeats_nothing_of_the_first(h: Harness, point: str) -> None:
    service = CaseService(recorded=h.recorded)
    quotes: Counter[int] = Counter()
    registry = WorkflowRegistry(reminder_loop(service, quotes))
    run = h.app.runs.start(h.agent, registry.get("reminders"), ReminderState())
    plan = FaultPlan(crash_at=len(BOUNDARIES_PER_VISIT) + BOUNDARIES_PER_VISIT.index(point))

    owners = finish(h, registry, run.run_id, plan)

    assert plan.crashed is not None
    assert plan.crashed[0] == point
    assert len(owners) == 2
    first, second, third = (
        idempotency_key(TENANT, run.run_id, "remind", v, 2, "send_reminder") for v in (1, 2, 3)
    )
    assert service.calls[first] == 1
    assert quotes[1] == 1, "the first visit's model step ran again"
    assert service.calls[third] == 1
    assert service.calls[second] == (2 if point == "after_effect" else 1)
    assert sorted(service.applied) == sorted([first, second, third])
    assert service.late_calls == []
    completed = [e.data["visit"] for e in h.events(run.run_id) if e.type == "node.completed"]
    assert completed == [1, 2, 3]
    state = h.state(run.run_id)
    assert state["sent"] == [service.applied[key] for key in (first, second, third)]
    assert [sent["round"] for sent in state["sent"]] == [1, 2, 3]
