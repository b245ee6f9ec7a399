"""An effect interrupted mid-call, and every way an operator brings its run back.

A worker dies (or stalls) after an effect's intent is journaled and before its result is.
Whether the call may still be in flight is read from the journal (an intent without a
result), not from how the run came back, so a lease takeover, a pause and a resume, a
retry of the failed or cancelled run (on its version or a newer one), a retry of the node
and a fork all settle it the same way: ``reconcile`` records a result it finds; "not
applied" or no ``reconcile`` parks the run in ``human_review`` (the call may still land),
and the effect is sent once, under its key, only after a person answers ``retry``; a
retry-safe effect is sent again under the same key. Never twice applied, never dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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
    open_wait,
)
from tests.support import TestDatabase
from tether.errors import EffectsWouldRerun
from tether.runs import (
    END,
    InterruptReason,
    RetryPolicy,
    Run,
    RunContext,
    RunStatus,
    Workflow,
    WorkflowRegistry,
)
from tether.runs.inspection import EffectOutcome
from tether.runs.models import JournalKind, JournalStatus

BOUNDARY = {"after_intent": 3, "after_effect": 4}
"""The index of each crash point among the run's boundaries (two for ``check`` first):
``after_intent`` before the call, ``after_effect`` after it, both before the result."""


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Pay(BaseModel):
    checked: bool = False
    transfer: dict[str, Any] | None = None
    done: bool = False


@dataclass
class Bank:
    """The service, and whether its lookup answers (a fault, or a bug in old code)."""

    service: CaseService
    down: bool = False
    stall: Callable[[], None] = lambda: None

    def lookup(self, key: str) -> Any:
        if self.down:
            raise ConnectionError("the bank's lookup does not answer")
        return self.service.lookup(key)

    def transfer(self, key: str) -> dict[str, Any]:
        self.stall()
        return self.service.call(key, "transfer", {"amount": 80})


def payout(bank: Bank, mode: str, version: int = 1) -> Workflow[Pay]:
    """check -> pay (the transfer effect; ``mode`` says how it settles) -> done."""
    options: dict[str, Any] = {
        "reconcile": {"reconcile": bank.lookup},
        "review": {},
        "retry_safe": {"retry_safe": True},
    }[mode]
    wf: Workflow[Pay] = Workflow("payout", state=Pay, version=version)

    @wf.node(start=True)
    def check(ctx: RunContext, s: Pay) -> str:
        s.checked = True
        return "pay"

    @wf.node(retry=RetryPolicy(max_attempts=1))
    def pay(ctx: RunContext, s: Pay) -> str:
        s.transfer = ctx.effect("transfer", bank.transfer, request={"amount": 80}, **options)
        return "finish"

    @wf.node
    def finish(ctx: RunContext, s: Pay) -> str:
        s.done = True
        return END

    return wf


@dataclass
class Desk:
    h: Harness
    bank: Bank
    registry: WorkflowRegistry
    workers: Iterator[int] = field(default_factory=lambda: iter(range(2, 100)))

    @property
    def service(self) -> CaseService:
        return self.bank.service

    def work(self, run_id: str) -> Run:
        """A worker never seen before claims the run and drives it as far as it goes."""
        return self.h.executor(self.registry, f"worker-{next(self.workers)}").execute(
            TENANT, run_id
        )

    def crashed(self, point: str) -> tuple[str, str]:
        """A run whose worker died at ``point`` of its transfer: its id and the key."""
        run_id = self.h.app.runs.start(self.h.agent, self.registry.get("payout", 1), Pay()).run_id
        plan = FaultPlan(crash_at=BOUNDARY[point])
        with pytest.raises(Crash):
            self.h.executor(self.registry, "worker-1", faults=plan).execute(TENANT, run_id)
        assert plan.crashed is not None and plan.crashed[0] == point
        key = plan.crashed[1]
        assert self.service.calls[key] == (1 if point == "after_effect" else 0)
        assert [e.status for e in self.effects(run_id)] == [JournalStatus.INTENT]
        return run_id, key

    def effects(self, run_id: str) -> list[Any]:
        return [e for e in self.h.journal(run_id) if e.kind is JournalKind.EFFECT]

    def paused_after_takeover(self, run_id: str) -> Run:
        """The operator pauses the run; the worker that takes it over parks it."""
        self.h.app.runbook.pause(self.h.operator, run_id, reason="the bank is checking")
        self.h.clock.advance(PAST_LEASE)
        parked = self.work(run_id)
        assert parked.status is RunStatus.PAUSED
        assert "run.paused" in self.h.event_types(run_id)
        return parked

    def finish(self, run: Run, key: str) -> Run:
        """Answer the reviews the way a person who asked the bank would, until done."""
        for _ in range(5):
            if run.status is not RunStatus.PAUSED:
                return run
            wait = open_wait(self.h, run)
            assert wait.reason is InterruptReason.HUMAN_REVIEW
            asked = wait.request["idempotency_key"]
            found = self.service.lookup(asked)
            answer = {"retry": True} if asked not in self.service.applied else {"result": found}
            self.h.app.runs.answer(self.h.operator, wait.wait_id, answer)
            run = self.work(run.run_id)
        return run


def desk_for(h: Harness, mode: str) -> Desk:
    bank = Bank(CaseService(recorded=h.recorded))
    return Desk(h, bank, WorkflowRegistry(payout(bank, mode)))


def settled_by(h: Harness, run_id: str) -> list[str]:
    return [str(e.data["by"]) for e in h.events(run_id) if e.type == "effect.settled"]


def reviews(h: Harness, run_id: str) -> list[str]:
    return [
        w.message
        for w in h.waits(run_id)
        if w.reason is InterruptReason.HUMAN_REVIEW and "idempotency_key" in w.request
    ]


def check_settled(desk: Desk, run_id: str, key: str, mode: str, point: str, done: Run) -> None:
    """The run completed with the transfer applied once under its key, settled the way
    its mode and the crash point say."""
    h, service = desk.h, desk.service
    assert done.status is RunStatus.COMPLETED, done.error
    assert list(service.applied) == [key], "applied under another key, or twice"
    assert service.late_calls == [], "called after its result was recorded"
    expected_calls = 2 if (mode == "retry_safe" and point == "after_effect") else 1
    assert service.calls[key] == expected_calls
    assert h.state(run_id)["transfer"] == service.applied[key]
    in_review = mode == "review" or (mode == "reconcile" and point == "after_intent")
    messages = reviews(h, run_id)
    if in_review:
        assert len(messages) == 1 and "interrupted mid-effect" in messages[0], messages
        assert "may still be in flight" in messages[0]
    else:
        assert messages == []
    if mode == "reconcile" and point == "after_effect":
        assert settled_by(h, run_id) == ["reconcile"]
    elif mode == "review" and point == "after_effect":
        assert settled_by(h, run_id) == ["operator"]
    else:
        assert settled_by(h, run_id) == []
    assert [e.status for e in desk.effects(run_id)] == [JournalStatus.DONE]


CASES = [
    (mode, point)
    for mode in ("reconcile", "review", "retry_safe")
    for point in ("after_intent", "after_effect")
]


@pytest.mark.parametrize(("mode", "point"), CASES)
def test_an_effect_interrupted_mid_call_is_reconciled_after_pause_and_resume(
    h: Harness, mode: str, point: str
) -> None:
    desk = desk_for(h, mode)
    run_id, key = desk.crashed(point)
    desk.paused_after_takeover(run_id)

    seen = h.app.runbook.inspect(h.operator, run_id)
    (pending,) = seen.pending_effects
    assert (pending.name, pending.idempotency_key, pending.outcome) == (
        "transfer",
        key,
        EffectOutcome.UNKNOWN,
    )
    assert pending.interrupted and pending.label == "interrupted"
    assert desk.service.calls[key] == (1 if point == "after_effect" else 0)

    h.app.runbook.resume(h.operator, run_id, reason="the bank answered")
    back = desk.work(run_id)
    claims = [e.data for e in h.events(run_id) if e.type == "run.claimed"]
    assert "taken_over" not in claims[-1], "the claim after a resume is not a takeover"
    if mode == "review" or (mode == "reconcile" and point == "after_intent"):
        assert back.status is RunStatus.PAUSED, "an interrupted effect was sent again"
        assert desk.service.calls[key] == (1 if point == "after_effect" else 0)
        assert h.app.runbook.inspect(h.operator, run_id).pending_effects[0].review_id == (
            back.wait_id
        )

    check_settled(desk, run_id, key, mode, point, desk.finish(back, key))


def test_a_call_still_in_flight_when_the_run_is_resumed_is_not_sent_again(h: Harness) -> None:
    """The worker is not dead but stalled inside the call past its lease; the run is
    paused, parked by another worker and resumed. "Not applied" is what the bank says
    while the first call has not landed yet, so the effect goes to review; the call then
    lands, and the review is answered with its result."""
    desk = desk_for(h, "reconcile")
    release, entered, stalled = threading.Event(), threading.Event(), [True]

    def stall() -> None:
        if stalled[0]:
            stalled[0] = False
            entered.set()
            assert release.wait(10)

    desk.bank.stall = stall
    run_id = h.app.runs.start(h.agent, desk.registry.get("payout"), Pay()).run_id
    outcome: list[Run] = []
    first = h.executor(desk.registry, "worker-1")
    thread = threading.Thread(target=lambda: outcome.append(first.execute(TENANT, run_id)))
    thread.start()
    assert entered.wait(10)
    h.clock.advance(PAST_LEASE)
    desk.paused_after_takeover(run_id)
    h.app.runbook.resume(h.operator, run_id, reason="the bank answered")

    back = desk.work(run_id)
    release.set()
    thread.join(10)

    assert back.status is RunStatus.PAUSED
    (key,) = desk.service.calls
    assert desk.service.calls[key] == 1, "sent again while the first call was in flight"
    assert outcome, "the stalled worker did not stop"
    assert "effect.done" not in h.event_types(run_id), "the stalled worker wrote its result"
    check_settled(desk, run_id, key, "review", "after_effect", desk.finish(back, key))


@pytest.mark.parametrize("point", ["after_intent", "after_effect"])
@pytest.mark.parametrize("how", ["failed", "cancelled", "to_version"])
def test_a_retried_run_reconciles_its_interrupted_effect(h: Harness, how: str, point: str) -> None:
    """Failed: the takeover's ``reconcile`` raised (the bank's lookup was down, or on
    version 1 a bug), so the node failed with the intent open; after the fix the run is
    retried. Cancelled: the operator cancelled it mid-effect, then retried it."""
    desk = desk_for(h, "reconcile")
    if how == "to_version":
        broken = Bank(desk.service, down=True)
        desk.registry = WorkflowRegistry(
            payout(broken, "reconcile"), payout(desk.bank, "reconcile", version=2)
        )
    run_id, key = desk.crashed(point)
    if how == "cancelled":
        h.app.runbook.cancel(h.operator, run_id, reason="the payee called")
    else:
        desk.bank.down = how == "failed"
    h.clock.advance(PAST_LEASE)
    stopped = desk.work(run_id)

    assert stopped.status is (RunStatus.CANCELLED if how == "cancelled" else RunStatus.FAILED)
    assert [e.status for e in desk.effects(run_id)] == [JournalStatus.INTENT]
    assert desk.service.calls[key] == (1 if point == "after_effect" else 0)
    desk.bank.down = False
    retried = h.app.runbook.retry(
        h.operator,
        run_id,
        reason="the lookup is fixed",
        to_version=2 if how == "to_version" else None,
        workflows=desk.registry,
    )
    assert retried.workflow_version == (2 if how == "to_version" else 1)

    back = desk.work(run_id)

    if point == "after_intent":
        assert back.status is RunStatus.PAUSED, "an interrupted effect was sent again"
        assert desk.service.calls[key] == 0
    check_settled(desk, run_id, key, "reconcile", point, desk.finish(back, key))


def test_retry_node_names_the_interrupted_effect_and_sends_it_only_under_a_new_key(
    h: Harness,
) -> None:
    desk = desk_for(h, "review")
    run_id, key = desk.crashed("after_effect")
    desk.paused_after_takeover(run_id)

    with pytest.raises(EffectsWouldRerun) as refused:
        h.app.runbook.retry_node(h.operator, run_id, reason="start the payment over")
    assert refused.value.effects == [f"transfer ({key}): interrupted"]
    h.app.runbook.retry_node(
        h.operator, run_id, reason="start the payment over", rerun_effects=True
    )
    done = desk.work(run_id)

    assert done.status is RunStatus.COMPLETED, done.error
    new_key = key.replace(":pay:1:", ":pay:2:")
    assert dict(desk.service.calls) == {key: 1, new_key: 1}
    (old,) = h.app.runbook.inspect(h.operator, run_id).pending_effects
    assert (old.idempotency_key, old.interrupted) == (key, True), "the old intent was dropped"


def test_a_fork_lists_the_interrupted_effect_and_leaves_the_original_to_reconcile(
    h: Harness,
) -> None:
    desk = desk_for(h, "reconcile")
    run_id, key = desk.crashed("after_intent")
    desk.paused_after_takeover(run_id)
    journal = h.journal(run_id)

    plan = h.app.runbook.plan_fork(h.operator, run_id, checkpoint=1)
    (rerun,) = plan.rerun
    assert (rerun.effect.idempotency_key, rerun.effect.interrupted) == (key, True)
    with pytest.raises(EffectsWouldRerun) as refused:
        h.app.runbook.fork(
            h.operator, run_id, checkpoint=1, reason="redo it", workflows=desk.registry
        )
    assert refused.value.effects == [f"transfer ({key}): interrupted"]
    fork = h.app.runbook.fork(
        h.operator,
        run_id,
        checkpoint=1,
        reason="redo it",
        workflows=desk.registry,
        rerun_effects=True,
    ).run

    assert desk.work(fork.run_id).status is RunStatus.COMPLETED
    fork_key = key.replace(run_id, fork.run_id)
    assert dict(desk.service.calls) == {fork_key: 1}
    assert h.journal(run_id) == journal, "the fork touched the original's journal"
    h.app.runbook.resume(h.operator, run_id, reason="settle the original too")
    original = desk.work(run_id)
    assert original.status is RunStatus.PAUSED, "the original's effect was sent blindly"
    assert desk.service.calls[key] == 0
    assert open_wait(h, original).request["idempotency_key"] == key
