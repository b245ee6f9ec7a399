"""Time travel and code fixes: a fork from checkpoint k, a failed run retried on a newer
workflow version. A fake payment service counts its calls per idempotency key, so "ran
again" and "applied twice" are told apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, CaseService, Harness, open_harness
from tests.support import TestDatabase, auditor
from tether.errors import Conflict, InvalidInput, NotFound
from tether.runs import END, RetryPolicy, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.inspection import EffectOutcome

FORK_ID = "01900000-0000-7000-8000-00000000f001"


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Payout(BaseModel):
    amount: int = 100
    checked: bool = False
    transfer: dict[str, Any] | None = None
    notified: dict[str, Any] | None = None


class PayoutV2(Payout):
    currency: str


def payout_v1(service: CaseService, *, bug: bool = False) -> Workflow[Payout]:
    wf: Workflow[Payout] = Workflow("payout", state=Payout, version=1)

    @wf.node(start=True)
    def check(ctx: RunContext, s: Payout) -> str:
        s.checked = True
        return "pay"

    @wf.node(retry=RetryPolicy(max_attempts=2, backoff_s=0))
    def pay(ctx: RunContext, s: Payout) -> str:
        s.transfer = ctx.effect(
            "transfer",
            lambda key: service.call(key, "transfer", {"amount": s.amount}),
            request={"amount": s.amount},
        )
        if bug:
            raise KeyError("currency")
        return "notify"

    @wf.node
    def notify(ctx: RunContext, s: Payout) -> str:
        s.notified = ctx.effect(
            "notify", lambda key: service.call(key, "notify", {}), request={"to": "owner"}
        )
        return END

    return wf


def payout_v2(service: CaseService) -> Workflow[PayoutV2]:
    """The fix: the state gains a currency (version 2, filled in by the upgrade from 1) and
    ``pay`` makes the same transfer, then uses it."""
    wf: Workflow[PayoutV2] = Workflow(
        "payout",
        state=PayoutV2,
        version=2,
        state_version=2,
        upgrades={1: lambda old: {**old, "currency": "EUR"}},
    )

    @wf.node(start=True)
    def check(ctx: RunContext, s: PayoutV2) -> str:
        return "pay"

    @wf.node
    def pay(ctx: RunContext, s: PayoutV2) -> str:
        s.transfer = ctx.effect(
            "transfer",
            lambda key: service.call(key, "transfer", {"amount": s.amount}),
            request={"amount": s.amount},
        )
        s.transfer = {**s.transfer, "currency": s.currency}
        return "notify"

    @wf.node
    def notify(ctx: RunContext, s: PayoutV2) -> str:
        s.notified = ctx.effect(
            "notify", lambda key: service.call(key, "notify", {}), request={"to": "owner"}
        )
        return END

    return wf


def stored(h: Harness, run_id: str) -> tuple[Any, ...]:
    """Everything stored about the run itself (the tenant's trail aside)."""
    return h.snapshot(run_id)[:-1]


def completed_run(h: Harness, service: CaseService) -> tuple[WorkflowRegistry, str]:
    registry = WorkflowRegistry(payout_v1(service))
    run_id = h.app.runs.start(h.agent, registry.get("payout"), Payout()).run_id
    assert h.executor(registry, "w").execute(TENANT, run_id).status is RunStatus.COMPLETED
    return registry, run_id


def test_a_fork_from_checkpoint_k_reruns_under_new_keys_only_with_the_flag(h: Harness) -> None:
    service = CaseService()
    registry, run_id = completed_run(h, service)
    assert [c.seq for c in h.checkpoints(run_id)] == [0, 1, 2, 3]
    original = stored(h, run_id)
    runs_before = h.app.runs.all(h.admin)

    plan = h.app.runbook.plan_fork(h.operator, run_id, checkpoint=1)

    assert (plan.node, plan.state["checked"]) == ("pay", True)
    assert [(r.effect.name, r.effect.outcome) for r in plan.rerun] == [
        ("transfer", EffectOutcome.APPLIED),
        ("notify", EffectOutcome.APPLIED),
    ]
    with pytest.raises(Conflict, match=r"2 effect\(s\).*transfer.*notify.*--rerun-effects"):
        h.app.runbook.fork(
            h.operator,
            run_id,
            checkpoint=1,
            reason="redo with the right amount",
            workflows=registry,
        )
    assert h.app.runs.all(h.admin) == runs_before
    assert stored(h, run_id) == original

    forked = h.app.runbook.fork(
        h.operator,
        run_id,
        checkpoint=1,
        patch={"amount": 250},
        reason="redo with the right amount",
        comment="ticket 7",
        workflows=registry,
        rerun_effects=True,
        new_run_id=FORK_ID,
    )

    fork = forked.run
    assert (fork.run_id, fork.status, fork.current_node) == (FORK_ID, RunStatus.QUEUED, "pay")
    assert (fork.visits, fork.created_by, fork.workflow_version) == ({"check": 1}, "agent-1", 1)
    assert [(c.seq, c.node, c.next_node) for c in h.checkpoints(FORK_ID)] == [
        (0, "", "check"),
        (1, "check", "pay"),
        (2, "", "pay"),
    ]
    assert h.state(FORK_ID)["amount"] == 250
    (created,) = h.events(FORK_ID)
    note = h.app.notes.digest(TENANT, "redo with the right amount")
    assert created.type == "run.created"
    assert created.data["forked_from"] == run_id and created.data["checkpoint"] == 1
    assert (created.data["reason"], created.data["by"]) == (note, h.operator.principal_id)
    entry = h.app.audit.entries(auditor(TENANT), limit=10_000)[-1]
    assert (entry.action, entry.target, entry.details["fork"]) == (
        "run.forked",
        f"run:{run_id}",
        FORK_ID,
    )
    assert entry.details["reason"] == note and "right amount" not in str(entry.details)
    assert h.app.notes.read(h.operator, entry.details["comment"]) == "ticket 7"

    assert h.executor(registry, "w").execute(TENANT, FORK_ID).status is RunStatus.COMPLETED
    new_keys = [r.new_key for r in forked.plan.rerun]
    assert all(FORK_ID in str(key) for key in new_keys)
    assert sorted(k for k in service.calls if FORK_ID in k) == sorted(str(k) for k in new_keys)
    assert set(service.calls.values()) == {1}, "a key was called twice"
    assert service.applied[str(new_keys[0])]["amount"] == 250
    assert stored(h, run_id) == original, "the fork changed the original"

    later = h.app.runbook.plan_fork(h.operator, run_id, checkpoint=2)
    assert [r.effect.name for r in later.rerun] == ["notify"]
    again = h.app.runbook.plan_fork(h.operator, FORK_ID, checkpoint=2)
    assert [r.effect.name for r in again.rerun] == ["transfer", "notify"]
    assert all(r.effect.node != "check" for r in again.rerun)


def test_a_fork_from_nowhere_or_with_a_bad_patch_creates_nothing(h: Harness) -> None:
    service = CaseService()
    registry, run_id = completed_run(h, service)
    before = (stored(h, run_id), h.app.runs.all(h.admin))

    with pytest.raises(InvalidInput, match="its last"):
        h.app.runbook.fork(h.operator, run_id, checkpoint=3, reason="r", workflows=registry)
    with pytest.raises(NotFound, match="no checkpoint 9"):
        h.app.runbook.fork(h.operator, run_id, checkpoint=9, reason="r", workflows=registry)
    with pytest.raises(InvalidInput, match="amount"):
        h.app.runbook.fork(
            h.operator,
            run_id,
            checkpoint=2,
            reason="r",
            workflows=registry,
            patch={"amount": "a lot"},
            rerun_effects=True,
        )
    with pytest.raises(Conflict, match="exists"):
        h.app.runbook.fork(
            h.operator,
            run_id,
            checkpoint=2,
            reason="r",
            workflows=registry,
            rerun_effects=True,
            new_run_id=run_id,
        )

    assert (stored(h, run_id), h.app.runs.all(h.admin)) == before


def test_a_failed_run_retried_after_a_code_fix_completes_without_repeating_its_effects(
    h: Harness,
) -> None:
    service = CaseService(recorded=h.recorded)
    broken = WorkflowRegistry(payout_v1(service, bug=True))
    run_id = h.app.runs.start(h.agent, broken.get("payout"), Payout()).run_id
    worker = h.executor(broken, "w")
    for _ in range(2):
        worker.execute(TENANT, run_id)
    assert h.run(run_id).status is RunStatus.FAILED
    assert service.calls[service.keys_for("transfer")[0]] == 1
    fixed = WorkflowRegistry(payout_v1(service, bug=True), payout_v2(service))
    before = stored(h, run_id)

    for to_version, registry, error in [
        (1, fixed, InvalidInput),
        (3, fixed, NotFound),
        (2, None, InvalidInput),
        (2, WorkflowRegistry(payout_v1(service), _without_pay()), InvalidInput),
        (2, WorkflowRegistry(payout_v1(service), _without_upgrade(service)), InvalidInput),
    ]:
        with pytest.raises(error):
            h.app.runbook.retry(
                h.operator, run_id, reason="fix", to_version=to_version, workflows=registry
            )
    assert stored(h, run_id) == before

    retried = h.app.runbook.retry(
        h.operator, run_id, reason="currency fix deployed", to_version=2, workflows=fixed
    )

    assert (retried.status, retried.workflow_version) == (RunStatus.QUEUED, 2)
    assert h.run(run_id).workflow_version == 2
    (event,) = [e for e in h.events(run_id) if e.type == "run.retried"]
    assert (event.data["from_version"], event.data["to_version"]) == (1, 2)
    entry = h.app.audit.entries(auditor(TENANT), limit=10_000)[-1]
    assert (entry.action, entry.details["to_version"]) == ("run.retried", 2)
    assert entry.details["reason"] == h.app.notes.digest(TENANT, "currency fix deployed")
    with pytest.raises(NotFound, match="payout@2 is not registered"):
        worker.execute(TENANT, run_id)
    assert h.run(run_id).status is RunStatus.QUEUED, "a worker without version 2 claimed it"

    done = h.executor(fixed, "w2").execute(TENANT, run_id)

    assert done.status is RunStatus.COMPLETED
    assert h.state(run_id)["transfer"]["currency"] == "EUR"
    assert h.checkpoints(run_id)[-1].state_version == 2
    assert list(service.calls.values()) == [1, 1], "a recorded effect was repeated"
    assert service.late_calls == []


def _without_pay() -> Workflow[PayoutV2]:
    wf: Workflow[PayoutV2] = Workflow(
        "payout", state=PayoutV2, version=2, state_version=2, upgrades={1: dict}
    )

    @wf.node(start=True)
    def check(ctx: RunContext, s: PayoutV2) -> str:
        return END

    return wf


def _without_upgrade(service: CaseService) -> Workflow[PayoutV2]:
    wf = payout_v2(service)
    wf.upgrades = {}
    return wf
