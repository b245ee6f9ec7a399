"""Approvals: who may decide, when, and that a gated effect does only what was approved."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, CaseService, Harness, open_harness, open_wait
from tests.support import TestDatabase
from tether.errors import Conflict, PermissionDenied
from tether.principals import Principal
from tether.runs import (
    END,
    ApprovalDecision,
    InterruptReason,
    Run,
    RunContext,
    RunStatus,
    WaitStatus,
    Workflow,
    WorkflowRegistry,
)
from tether.runs.models import JournalKind


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class PayState(BaseModel):
    amount: int | None = None
    decision: dict[str, Any] | None = None
    paid: dict[str, Any] | None = None


def payment(service: CaseService, quotes: list[int]) -> Workflow[PayState]:
    """Propose a payment from a quote, get it approved, then pay from a fresh quote."""
    wf: Workflow[PayState] = Workflow("payment", state=PayState)
    remaining = iter(quotes)

    @wf.node(start=True)
    def propose(ctx: RunContext, s: PayState) -> str:
        s.amount = ctx.step("quote", lambda: next(remaining))
        decision = ctx.approval(
            {"pay": s.amount, "to": "C. Doe"},
            rationale="the claim is covered by policy P-7",
            risk="high",
            expires_in=timedelta(hours=24),
        )
        s.decision = decision.model_dump(mode="json")
        return "pay"

    @wf.node
    def pay(ctx: RunContext, s: PayState) -> str:
        amount = ctx.step("quote", lambda: next(remaining))
        action = {"pay": amount, "to": "C. Doe"}
        s.paid = ctx.effect(
            "pay_claim",
            lambda key: service.call(key, "pay_claim", action),
            request=action,
            approval=ApprovalDecision.model_validate(s.decision),
        )
        return END

    return wf


def waiting_for_approval(
    h: Harness, registry: WorkflowRegistry, requester: Principal | None = None
) -> Run:
    run = h.app.runs.start(requester or h.agent, registry.get("payment"), PayState())
    waiting = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    return waiting


@pytest.mark.parametrize(("quotes", "pays"), [([100, 100], True), ([100, 150], False)])
def test_a_gated_effect_refuses_an_action_other_than_the_approved_one(
    h: Harness, quotes: list[int], pays: bool
) -> None:
    service = CaseService()
    registry = WorkflowRegistry(payment(service, quotes))
    run = waiting_for_approval(h, registry)
    wait = open_wait(h, run)
    assert wait.request["action"] == {"pay": 100, "to": "C. Doe"}

    h.app.runs.decide(h.approver, wait.wait_id, approve=True)
    after = h.executor(registry, "worker-2").execute(TENANT, run.run_id)

    if pays:
        assert after.status is RunStatus.COMPLETED
        assert list(service.calls.values()) == [1]
        return
    assert after.status is RunStatus.PAUSED
    assert service.calls == {}
    review = open_wait(h, after)
    assert review.reason is InterruptReason.HUMAN_REVIEW
    assert "differs from the action approved" in review.message
    assert wait.wait_id in review.message
    refused = [e for e in h.events(run.run_id) if e.type == "effect.refused"]
    assert len(refused) == 1
    assert refused[0].data["reason"] == "human_review"
    assert not [e for e in h.journal(run.run_id) if e.kind is JournalKind.EFFECT]


def test_a_rejected_approval_gates_its_effect_shut(h: Harness) -> None:
    service = CaseService()
    registry = WorkflowRegistry(payment(service, [100, 100]))
    run = waiting_for_approval(h, registry)

    h.app.runs.decide(h.approver, open_wait(h, run).wait_id, approve=False, comment="no")
    after = h.executor(registry, "worker-2").execute(TENANT, run.run_id)

    assert after.status is RunStatus.PAUSED
    assert "rejected" in open_wait(h, after).message
    assert "effect.refused" in h.event_types(run.run_id)
    assert service.calls == {}


def test_the_requester_cannot_approve_its_own_request(h: Harness) -> None:
    registry = WorkflowRegistry(payment(CaseService(), [100, 100]))
    run = waiting_for_approval(h, registry, requester=h.self_approving_agent)
    wait = open_wait(h, run)
    before = h.snapshot(run.run_id)

    with pytest.raises(PermissionDenied, match="may not decide"):
        h.app.runs.decide(h.self_approving_agent, wait.wait_id, approve=True)

    assert h.snapshot(run.run_id) == before
    assert h.run(run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
    assert h.wait(wait.wait_id).status is WaitStatus.OPEN


@pytest.mark.parametrize("who", ["agent", "operator", "viewer"])
def test_a_principal_without_the_approver_role_cannot_decide(h: Harness, who: str) -> None:
    registry = WorkflowRegistry(payment(CaseService(), [100, 100]))
    run = waiting_for_approval(h, registry)
    wait = open_wait(h, run)
    before = h.snapshot(run.run_id)
    principal = {"agent": h.agent, "operator": h.operator, "viewer": h.viewer}[who]

    for approve in (True, False):
        with pytest.raises(PermissionDenied, match="approver"):
            h.app.runs.decide(principal, wait.wait_id, approve=approve)

    assert h.snapshot(run.run_id) == before
    assert h.run(run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
    assert h.wait(wait.wait_id).status is WaitStatus.OPEN


def test_deciding_twice_is_a_conflict_and_changes_nothing(h: Harness) -> None:
    registry = WorkflowRegistry(payment(CaseService(), [100, 100]))
    run = waiting_for_approval(h, registry)
    wait = open_wait(h, run)
    h.app.runs.decide(h.approver, wait.wait_id, approve=True, comment="ok")
    decided = h.snapshot(run.run_id)

    for principal, approve in [(h.approver, True), (h.second_approver, False)]:
        with pytest.raises(Conflict, match="already approved"):
            h.app.runs.decide(principal, wait.wait_id, approve=approve)

    assert h.snapshot(run.run_id) == decided
    stored = h.wait(wait.wait_id)
    assert stored.status is WaitStatus.APPROVED
    assert stored.resolved_by == h.approver.principal_id


def test_an_expired_request_can_no_longer_be_decided(h: Harness) -> None:
    registry = WorkflowRegistry(payment(CaseService(), [100, 100]))
    run = waiting_for_approval(h, registry)
    wait = open_wait(h, run)
    assert wait.expires_at == h.clock.now() + timedelta(hours=24)
    h.clock.advance(timedelta(hours=24, seconds=1))
    before = h.snapshot(run.run_id)

    for approve in (True, False):
        with pytest.raises(Conflict, match="expired"):
            h.app.runs.decide(h.approver, wait.wait_id, approve=approve)

    assert h.snapshot(run.run_id) == before
    assert h.run(run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
    assert h.wait(wait.wait_id).status is WaitStatus.OPEN
