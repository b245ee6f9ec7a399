"""The recovery runbook: each operator action on a run, on both backends.

Each action is checked where an operator would look: the run's status, the event it left
in the run's log and the audit entry, which cite the reason by digest (the text is in the
erasable notes, never in the trail). Without the operator role, or without a reason, every
action is refused and nothing changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import START, TENANT, CaseService, Harness, open_harness
from tests.support import TestDatabase, auditor
from tether.audit.log import AuditEntry
from tether.errors import ConcurrentChange, Conflict, InvalidInput, PermissionDenied
from tether.principals import Principal
from tether.runs import (
    END,
    InterruptReason,
    RetryPolicy,
    Run,
    RunContext,
    RunStatus,
    WaitStatus,
    Workflow,
    WorkflowRegistry,
)
from tether.runs.inspection import EffectOutcome


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Payout(BaseModel):
    amount: int = 100
    checked: bool = False
    transfer: dict[str, Any] | None = None
    notified: dict[str, Any] | None = None
    answer: str | None = None


@dataclass
class Bugs:
    """What goes wrong in the payout's nodes: switched off by the test, like a fix."""

    after_transfer: bool = False
    ask: bool = False
    calls: list[str] = field(default_factory=list)


def payout(service: CaseService, bugs: Bugs) -> Workflow[Payout]:
    """check -> pay (an effect, then maybe a question or a bug) -> notify (an effect)."""
    wf: Workflow[Payout] = Workflow("payout", state=Payout)

    @wf.node(start=True)
    def check(ctx: RunContext, s: Payout) -> str:
        bugs.calls.append("check")
        s.checked = True
        return "pay"

    @wf.node(retry=RetryPolicy(max_attempts=1))
    def pay(ctx: RunContext, s: Payout) -> str:
        bugs.calls.append("pay")
        s.transfer = ctx.effect(
            "transfer",
            lambda key: service.call(key, "transfer", {"amount": s.amount}),
            request={"amount": s.amount},
        )
        if bugs.ask:
            s.answer = ctx.interrupt(InterruptReason.EXTERNAL_DEPENDENCY, "is the bank back?")
        if bugs.after_transfer:
            raise KeyError("currency")
        return "notify"

    @wf.node
    def notify(ctx: RunContext, s: Payout) -> str:
        bugs.calls.append("notify")
        s.notified = ctx.effect(
            "notify", lambda key: service.call(key, "notify", {}), request={"to": "owner"}
        )
        return END

    return wf


@dataclass
class Desk:
    h: Harness
    service: CaseService
    bugs: Bugs
    registry: WorkflowRegistry

    def start(self, **state: Any) -> str:
        return self.h.app.runs.start(self.h.agent, self.registry.get("payout"), state).run_id

    def execute(self, run_id: str) -> Run:
        return self.h.executor(self.registry, "worker-1").execute(TENANT, run_id)

    def failed(self) -> str:
        """A run that failed in ``pay`` after its transfer was applied."""
        self.bugs.after_transfer = True
        run_id = self.start()
        assert self.execute(run_id).status is RunStatus.FAILED
        self.bugs.after_transfer = False
        return run_id

    def paused(self) -> str:
        run_id = self.start()
        self.h.app.runbook.pause(self.h.operator, run_id, reason="hold on")
        return run_id


@pytest.fixture
def desk(h: Harness) -> Desk:
    service, bugs = CaseService(), Bugs()
    return Desk(h, service, bugs, WorkflowRegistry(payout(service, bugs)))


def acted(h: Harness, run_id: str, event: str, action: str, reason: str) -> AuditEntry:
    """Check the run's last ``event`` and the last audit entry cite ``reason`` by digest
    and are by the operator; return the entry."""
    note = h.app.notes.digest(TENANT, reason)
    (last,) = [e for e in h.events(run_id) if e.type == event][-1:]
    assert last.data["reason"] == note, last
    assert last.data["by"] == h.operator.principal_id
    entry = h.app.audit.entries(auditor(TENANT), limit=10_000)[-1]
    assert (entry.action, entry.target, entry.actor_id) == (
        action,
        f"run:{run_id}",
        h.operator.principal_id,
    )
    assert entry.details["reason"] == note
    assert reason not in json.dumps(entry.details), "the reason's text reached the trail"
    assert h.app.notes.read(h.operator, note) == reason
    return entry


def test_pause_and_resume_a_queued_run(desk: Desk) -> None:
    h = desk.h
    run_id = desk.start()

    paused = h.app.runbook.pause(h.operator, run_id, reason="bank maintenance", comment="call Jo")

    assert paused.status is RunStatus.PAUSED
    entry = acted(h, run_id, "run.paused", "run.paused", "bank maintenance")
    assert h.app.notes.read(h.operator, entry.details["comment"]) == "call Jo"
    assert desk.execute(run_id).status is RunStatus.PAUSED, "a worker claimed a paused run"
    assert desk.bugs.calls == []
    with pytest.raises(Conflict, match="paused"):
        h.app.runbook.pause(h.operator, run_id, reason="again")

    resumed = h.app.runbook.resume(h.operator, run_id, reason="bank is back")

    assert resumed.status is RunStatus.QUEUED
    acted(h, run_id, "run.resumed", "run.resumed", "bank is back")
    assert desk.execute(run_id).status is RunStatus.COMPLETED


def test_a_running_run_is_paused_at_its_next_node_and_resumes_from_its_journal(
    desk: Desk,
) -> None:
    h = desk.h
    asked: list[Run] = []
    wf: Workflow[Payout] = Workflow("payout", state=Payout, version=2)

    @wf.node(start=True)
    def check(ctx: RunContext, s: Payout) -> str:
        s.transfer = ctx.effect(
            "transfer", lambda key: desk.service.call(key, "transfer", {}), request={}
        )
        if not asked:
            asked.append(h.app.runbook.pause(h.operator, ctx.run_id, reason="freeze payouts"))
            assert h.app.runbook.inspect(h.operator, ctx.run_id).stop_requested == "pause"
        s.checked = True
        return END

    registry = WorkflowRegistry(wf)
    run_id = h.app.runs.start(h.agent, wf, Payout()).run_id

    stopped = h.executor(registry, "worker-1").execute(TENANT, run_id)

    assert asked[0].status is RunStatus.RUNNING and asked[0].cancel_requested
    assert stopped.status is RunStatus.PAUSED
    assert h.run(run_id).lease_owner is None
    paused = [e for e in h.events(run_id) if e.type == "run.paused"]
    assert paused[0].data == {"reason": h.app.notes.digest(TENANT, "freeze payouts")}
    assert h.app.audit.entries(auditor(TENANT), limit=10_000)[-1].action == "run.paused"
    with pytest.raises(Conflict, match="paused"):
        h.app.runbook.retry(h.operator, run_id, reason="not a failed run")

    h.app.runbook.resume(h.operator, run_id, reason="unfrozen")

    assert not h.run(run_id).cancel_requested
    assert h.executor(registry, "worker-1").execute(TENANT, run_id).status is RunStatus.COMPLETED
    assert list(desk.service.calls.values()) == [1], "the journaled transfer ran twice"


def test_resuming_a_running_run_drops_its_pause_request(desk: Desk) -> None:
    h = desk.h
    wf: Workflow[Payout] = Workflow("payout", state=Payout, version=2)

    @wf.node(start=True)
    def check(ctx: RunContext, s: Payout) -> str:
        h.app.runbook.pause(h.operator, ctx.run_id, reason="wrong run")
        h.app.runbook.resume(h.operator, ctx.run_id, reason="meant another one")
        return END

    run_id = h.app.runs.start(h.agent, wf, Payout()).run_id

    done = h.executor(WorkflowRegistry(wf), "worker-1").execute(TENANT, run_id)

    assert done.status is RunStatus.COMPLETED
    assert "run.paused" not in h.event_types(run_id)
    trail = h.app.audit.entries(auditor(TENANT), limit=10_000)
    assert [e.action for e in trail[-2:]] == ["run.paused", "run.resumed"]
    assert trail[-1].details["reason"] == h.app.notes.digest(TENANT, "meant another one")


def test_cancel_keeps_its_reason_by_digest(desk: Desk) -> None:
    h = desk.h
    desk.bugs.ask = True
    run_id = desk.start()
    waiting = desk.execute(run_id)
    assert waiting.status is RunStatus.PAUSED and waiting.wait_id

    cancelled = h.app.runbook.cancel(h.operator, run_id, reason="customer withdrew")

    assert cancelled.status is RunStatus.CANCELLED
    acted(h, run_id, "run.cancelled", "run.cancelled", "customer withdrew")
    assert h.wait(waiting.wait_id).status is WaitStatus.CANCELLED


def test_an_action_that_lost_a_race_with_a_worker_is_done_again_from_a_fresh_read(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's claim or step between an operator's read of a run and the write that
    depends on it fails that write (nothing written); the action is tried again from a
    fresh read, so the operator is not told to try again, and it is recorded once."""
    h = desk.h
    run_id = desk.start()
    writer = type(h.app.runbook._writer)
    real = writer.transition_txn
    lost: list[str] = []

    def racing(self: Any, txn: Any, principal: Any, run: Any, *args: Any, **kwargs: Any) -> Any:
        if not lost:
            lost.append(run.run_id)
            raise ConcurrentChange(f"run {run.run_id} changed concurrently; try again")
        return real(self, txn, principal, run, *args, **kwargs)

    monkeypatch.setattr(writer, "transition_txn", racing)

    cancelled = h.app.runbook.cancel(h.operator, run_id, reason="customer withdrew")

    assert lost == [run_id]
    assert cancelled.status is RunStatus.CANCELLED
    acted(h, run_id, "run.cancelled", "run.cancelled", "customer withdrew")
    entries = h.app.audit.entries(auditor(TENANT), limit=1000)
    assert [e.action for e in entries if e.target == f"run:{run_id}"].count("run.cancelled") == 1


def test_a_failed_run_is_retried_from_its_last_checkpoint_without_repeating_its_effects(
    desk: Desk,
) -> None:
    h = desk.h
    run_id = desk.failed()
    before = h.run(run_id)
    assert before.error == "KeyError: 'currency'"
    seen = h.app.runbook.inspect(h.operator, run_id)
    assert seen.checkpoint is not None and seen.checkpoint.seq == 1
    assert [(e.name, e.outcome) for e in seen.visit_effects] == [
        ("transfer", EffectOutcome.APPLIED)
    ]
    assert any(c.startswith(f"tether runs retry {run_id}") for c in seen.suggested)

    retried = h.app.runbook.retry(h.operator, run_id, reason="currency table restored")

    assert retried.status is RunStatus.QUEUED
    assert (retried.current_node, retried.attempt, retried.error) == ("pay", 0, None)
    entry = acted(h, run_id, "run.retried", "run.retried", "currency table restored")
    assert entry.details["visit"] == 1
    assert desk.execute(run_id).status is RunStatus.COMPLETED
    assert sorted(desk.service.calls.values()) == [1, 1], "a recorded effect ran again"


def test_retry_node_runs_the_node_afresh_under_new_keys_only_when_told(desk: Desk) -> None:
    h = desk.h
    run_id = desk.failed()
    before = h.snapshot(run_id)

    with pytest.raises(Conflict, match=r"transfer .*--rerun-effects"):
        h.app.runbook.retry_node(h.operator, run_id, reason="redo the transfer")
    assert h.snapshot(run_id) == before

    again = h.app.runbook.retry_node(
        h.operator, run_id, reason="the bank lost the transfer", rerun_effects=True
    )

    assert again.status is RunStatus.QUEUED
    assert (again.current_node, again.visits["pay"], again.checkpoint_seq) == ("pay", 1, 2)
    entry = acted(h, run_id, "node.retried", "run.node_retried", "the bank lost the transfer")
    assert entry.details["rerun"][0].startswith("transfer (")
    assert desk.execute(run_id).status is RunStatus.COMPLETED
    transfers = desk.service.keys_for("transfer")
    assert len(transfers) == 2 and [desk.service.calls[k] for k in transfers] == [1, 1]
    assert [k.split(":")[3] for k in transfers] == ["1", "2"], "the new visit reused a key"


def test_skip_moves_on_without_running_the_node(desk: Desk) -> None:
    h = desk.h
    run_id = desk.paused()
    with pytest.raises(InvalidInput, match="no node 'nowhere'"):
        h.app.runbook.skip(
            h.operator, run_id, next_node="nowhere", reason="x", workflows=desk.registry
        )

    skipped = h.app.runbook.skip(
        h.operator, run_id, next_node="notify", reason="paid by hand", workflows=desk.registry
    )

    assert (skipped.status, skipped.current_node) == (RunStatus.QUEUED, "notify")
    entry = acted(h, run_id, "node.skipped", "run.node_skipped", "paid by hand")
    assert (entry.details["node"], entry.details["next"]) == ("check", "notify")
    last = h.checkpoints(run_id)[-1]
    assert (last.seq, last.node, last.next_node) == (1, "check", "notify")
    assert desk.execute(run_id).status is RunStatus.COMPLETED
    assert desk.bugs.calls == ["notify"]
    assert desk.service.keys_for("transfer") == []


def test_complete_a_node_and_a_run_by_hand(desk: Desk) -> None:
    h = desk.h
    run_id = desk.failed()
    with pytest.raises(InvalidInput, match="amount"):
        h.app.runbook.complete(
            h.operator, run_id, output={"amount": "lots"}, reason="x", workflows=desk.registry
        )

    node = h.app.runbook.complete(
        h.operator,
        run_id,
        output={"transfer": {"manual": True}},
        next_node="notify",
        reason="transfer confirmed by phone",
        workflows=desk.registry,
    )

    assert (node.status, node.current_node) == (RunStatus.QUEUED, "notify")
    entry = acted(
        h, run_id, "node.completed", "run.completed_by_hand", "transfer confirmed by phone"
    )
    assert entry.details["fields"] == ["transfer"]
    assert entry.details["output"].startswith("sha256:")
    assert h.state(run_id)["transfer"] == {"manual": True}

    finished = h.app.runbook.complete(
        h.operator,
        run_id,
        output={"notified": {"by": "phone"}},
        reason="owner called",
        workflows=desk.registry,
    )

    assert finished.status is RunStatus.COMPLETED
    acted(h, run_id, "run.completed", "run.completed_by_hand", "owner called")
    assert h.state(run_id)["notified"] == {"by": "phone"}
    assert desk.execute(run_id).status is RunStatus.COMPLETED
    assert desk.service.keys_for("notify") == []
    with pytest.raises(Conflict, match="completed"):
        h.app.runbook.skip(
            h.operator, run_id, next_node="notify", reason="x", workflows=desk.registry
        )


def test_an_effect_of_unknown_outcome_is_shown_with_its_key_and_its_review(desk: Desk) -> None:
    h = desk.h
    run_id = desk.start()
    crashing = h.executor(desk.registry, "worker-1", faults=_crash_after_effect)
    with pytest.raises(_Crash):
        crashing.execute(TENANT, run_id)

    seen = h.app.runbook.inspect(h.operator, run_id)

    (pending,) = seen.pending_effects
    assert (pending.name, pending.outcome, pending.review_id) == (
        "transfer",
        EffectOutcome.UNKNOWN,
        None,
    )
    assert desk.service.calls[pending.idempotency_key] == 1
    h.clock.advance(timedelta(minutes=5))
    review = h.executor(desk.registry, "worker-2").execute(TENANT, run_id)
    assert review.status is RunStatus.PAUSED
    seen = h.app.runbook.inspect(h.operator, run_id)
    assert seen.pending_effects[0].review_id == review.wait_id
    assert seen.suggested[0].startswith(f"tether runs answer {review.wait_id}")


class _Crash(BaseException):
    pass


def _crash_after_effect(point: str, key: str) -> None:
    if point == "after_effect":
        raise _Crash(key)


Action = Callable[[Desk, Principal, str, str], Any]

ACTIONS: dict[str, tuple[Callable[[Desk], str], Action]] = {
    "pause": (Desk.start, lambda d, who, r, why: d.h.app.runbook.pause(who, r, reason=why)),
    "resume": (Desk.paused, lambda d, who, r, why: d.h.app.runbook.resume(who, r, reason=why)),
    "cancel": (Desk.start, lambda d, who, r, why: d.h.app.runbook.cancel(who, r, reason=why)),
    "retry": (Desk.failed, lambda d, who, r, why: d.h.app.runbook.retry(who, r, reason=why)),
    "retry_node": (
        Desk.paused,
        lambda d, who, r, why: d.h.app.runbook.retry_node(who, r, reason=why),
    ),
    "skip": (
        Desk.paused,
        lambda d, who, r, why: d.h.app.runbook.skip(
            who, r, next_node="notify", reason=why, workflows=d.registry
        ),
    ),
    "complete": (
        Desk.paused,
        lambda d, who, r, why: d.h.app.runbook.complete(
            who, r, output={"checked": True}, reason=why, workflows=d.registry
        ),
    ),
    "fork": (
        Desk.paused,
        lambda d, who, r, why: d.h.app.runbook.fork(
            who, r, checkpoint=0, reason=why, workflows=d.registry
        ),
    ),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_every_action_is_refused_without_the_role_or_without_a_reason(
    desk: Desk, action: str
) -> None:
    h = desk.h
    make, act = ACTIONS[action]
    run_id = make(desk)
    before = (h.snapshot(run_id), h.app.runs.all(h.admin))
    for who, reason, error in [
        (h.viewer, "why not", PermissionDenied),
        (h.agent, "why not", PermissionDenied),
        (h.approver, "why not", PermissionDenied),
        (h.operator, "", InvalidInput),
        (h.operator, "  \n ", InvalidInput),
        (h.operator, "x" * 2001, InvalidInput),
    ]:
        with pytest.raises(error):
            act(desk, who, run_id, reason)
    assert (h.snapshot(run_id), h.app.runs.all(h.admin)) == before, "a refusal changed something"

    act(desk, h.operator, run_id, "because")

    entry = h.app.audit.entries(auditor(TENANT), limit=10_000)[-1]
    assert entry.target == f"run:{run_id}"
    assert entry.details["reason"] == h.app.notes.digest(TENANT, "because")


class Refund(BaseModel):
    refunded: dict[str, Any] | None = None
    woke: Any = None


def refund(service: CaseService) -> Workflow[Refund]:
    """One node: ask a supervisor, then refund; an expired approval fails the run."""
    wf: Workflow[Refund] = Workflow("refund", state=Refund)

    @wf.node(start=True)
    def decide(ctx: RunContext, s: Refund) -> str:
        decision = ctx.approval({"refund": 40}, rationale="damaged parcel", expires_in=HOUR)
        if not decision.approved:
            raise RuntimeError(f"the approval was {decision.status.value}")
        s.refunded = ctx.effect(
            "refund",
            lambda key: service.call(key, "refund", {"amount": 40}),
            request={"refund": 40},
            approval=decision,
        )
        return END

    return wf


HOUR = timedelta(hours=1)


def test_an_approval_that_expired_is_asked_again_by_retry_node(h: Harness) -> None:
    service = CaseService()
    registry = WorkflowRegistry(refund(service))
    run_id = h.app.runs.start(h.agent, registry.get("refund"), Refund()).run_id
    worker = h.executor(registry, "worker-1")
    first = worker.execute(TENANT, run_id)
    assert first.status is RunStatus.WAITING_FOR_APPROVAL and first.wait_id
    h.clock.advance(2 * HOUR)
    assert h.app.runs.expire_waits() == 1
    assert worker.execute(TENANT, run_id).status is RunStatus.FAILED
    h.app.runbook.retry(h.operator, run_id, reason="try once more")
    assert worker.execute(TENANT, run_id).status is RunStatus.FAILED, "the replay asked again"

    again = h.app.runbook.retry_node(h.operator, run_id, reason="supervisor is back")

    acted(h, run_id, "node.retried", "run.node_retried", "supervisor is back")
    asked = worker.execute(TENANT, run_id)
    assert asked.status is RunStatus.WAITING_FOR_APPROVAL
    assert asked.wait_id not in (None, first.wait_id) and again.visits == {"decide": 1}
    h.app.runs.decide(h.approver, str(asked.wait_id), approve=True)
    assert worker.execute(TENANT, run_id).status is RunStatus.COMPLETED
    assert list(service.calls.values()) == [1]


def test_a_run_paused_on_a_timer_waits_for_it_again_when_resumed(h: Harness) -> None:
    wf: Workflow[Refund] = Workflow("sleepy", state=Refund)

    @wf.node(start=True)
    def sleep(ctx: RunContext, s: Refund) -> str:
        s.woke = ctx.interrupt(
            InterruptReason.SCHEDULED_RESUME, "wake up later", resume_at=START + HOUR
        )
        return END

    registry = WorkflowRegistry(wf)
    run_id = h.app.runs.start(h.agent, wf, Refund()).run_id
    worker = h.executor(registry, "worker-1")
    assert worker.execute(TENANT, run_id).status is RunStatus.SCHEDULED

    paused = h.app.runbook.pause(h.operator, run_id, reason="quiet night")

    assert (paused.status, paused.resume_at) == (RunStatus.PAUSED, None)
    acted(h, run_id, "run.paused", "run.paused", "quiet night")
    h.clock.advance(timedelta(minutes=10))
    assert worker.execute(TENANT, run_id).status is RunStatus.PAUSED

    resumed = h.app.runbook.resume(h.operator, run_id, reason="morning")

    assert (resumed.status, resumed.resume_at) == (RunStatus.SCHEDULED, START + HOUR)
    assert worker.execute(TENANT, run_id).status is RunStatus.SCHEDULED
    h.clock.advance(HOUR)
    assert worker.execute(TENANT, run_id).status is RunStatus.COMPLETED
