"""The case-review workflow.

load_case -> retrieve_policy -> check_evidence (asks the user if the report is missing)
-> draft_recommendation (a journaled model call) -> create_case_note (a side effect)
-> request_approval (a supervisor decides) -> finalise (revalidated, approval-gated);
on a rejection request_approval -> record_rejection (a case note says who rejected it and
why; the case stays open and nothing is finalised).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel

from examples.case_review.service import CaseService
from tether.runs import (
    END,
    NOT_APPLIED,
    ApprovalDecision,
    InterruptReason,
    RetryPolicy,
    RunContext,
    Usage,
    Workflow,
    WorkflowRegistry,
)


class CaseReview(BaseModel):
    case_id: str
    case: dict[str, Any] | None = None
    policy: dict[str, Any] | None = None
    evidence: str | None = None
    recommendation: str | None = None
    decision: str | None = None
    note: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None
    outcome: str | None = None


@cache
def service() -> CaseService:
    return CaseService.from_env()


case_review: Workflow[CaseReview] = Workflow("case_review", state=CaseReview, version=1)


@case_review.node(start=True, retry=RetryPolicy(max_attempts=3, backoff_s=0.2))
def load_case(ctx: RunContext, state: CaseReview) -> str:
    state.case = ctx.step("load_case", lambda: service().get_case(state.case_id))
    return "retrieve_policy"


@case_review.node
def retrieve_policy(ctx: RunContext, state: CaseReview) -> str:
    state.policy = ctx.step("retrieve_policy", lambda: service().get_policy("household-claims"))
    return "check_evidence"


@case_review.node
def check_evidence(ctx: RunContext, state: CaseReview) -> str:
    if state.evidence is None:
        state.evidence = ctx.interrupt(
            InterruptReason.CLARIFICATION_REQUIRED,
            f"Case {state.case_id} has no supporting report. Upload it or explain its absence.",
            payload={"case_id": state.case_id, "needs": "supporting report"},
        )
    return "draft_recommendation"


def fake_model(case: dict[str, Any], policy: dict[str, Any], evidence: str) -> dict[str, Any]:
    """Stands in for a model call: deterministic text plus what it would have cost."""
    text = (
        f"Recommend approving claim {case['case_id']} ({case['title']}) for {case['amount']}: "
        f"evidence '{evidence}' satisfies policy {policy['policy_id']} v{policy['version']}."
    )
    return {"text": text, "decision": "approve_claim", "tokens_in": 412, "tokens_out": 58}


@case_review.node
def draft_recommendation(ctx: RunContext, state: CaseReview) -> str:
    if state.case is None or state.policy is None or state.evidence is None:
        raise ValueError("draft_recommendation needs the case, the policy and the evidence")
    case, policy, evidence = state.case, state.policy, state.evidence
    draft = ctx.step(
        "draft_recommendation",
        lambda: fake_model(case, policy, evidence),
        usage=lambda d: Usage(
            tokens_in=d["tokens_in"], tokens_out=d["tokens_out"], cost_usd=0.0021
        ),
    )
    state.recommendation = draft["text"]
    state.decision = draft["decision"]
    return "create_case_note"


def add_note(ctx: RunContext, name: str, case_id: str, text: str) -> dict[str, Any]:
    """A case note as a keyed effect: after a crash the note is found by its key, not
    created again."""
    note: dict[str, Any] = ctx.effect(
        name,
        lambda key: service().add_note(case_id, text, key),
        request={"case_id": case_id, "text": text},
        reconcile=lambda key: service().find_note(key) or NOT_APPLIED,
    )
    return note


@case_review.node
def create_case_note(ctx: RunContext, state: CaseReview) -> str:
    state.note = add_note(ctx, "create_case_note", state.case_id, state.recommendation or "")
    return "request_approval"


def proposed_action(state: CaseReview) -> dict[str, Any]:
    amount = int(state.case["amount"]) if state.case else 0
    return {"case_id": state.case_id, "decision": state.decision, "amount": amount}


@case_review.node
def request_approval(ctx: RunContext, state: CaseReview) -> str:
    decision = ctx.approval(
        proposed_action(state),
        title=f"Approve claim {state.case_id}",
        rationale=state.recommendation or "",
        evidence=[f"note:{(state.note or {}).get('note_id')}", "policy:household-claims@3"],
        risk="high",
        alternatives=["request an independent assessment", "reject the claim"],
        on_approve="the claim is approved and the case closed as decided",
        on_reject="a case note records the rejection and the case stays open for manual handling",
        approver_role="approver",
    )
    state.approval = decision.model_dump(mode="json")
    return "finalise" if decision.approved else "record_rejection"


@case_review.node
def record_rejection(ctx: RunContext, state: CaseReview) -> str:
    decision = ApprovalDecision.model_validate(state.approval)
    add_note(
        ctx,
        "record_rejection",
        state.case_id,
        f"Recommendation rejected by {decision.decided_by}: {decision.comment or 'no comment'}. "
        "The case stays open for manual handling.",
    )
    state.outcome = "rejected by supervisor; left open for manual handling"
    return END


@case_review.node(retry=RetryPolicy(max_attempts=2, backoff_s=0.2))
def finalise(ctx: RunContext, state: CaseReview) -> str:
    decision = ApprovalDecision.model_validate(state.approval)
    action = proposed_action(state)

    def revalidate() -> str | None:
        case = service().get_case(state.case_id)
        if case["status"] != "open":
            return f"case {state.case_id} is {case['status']}, no longer open"
        if case["assigned_to"] != ctx.requested_by:
            return f"{ctx.requested_by} is no longer assigned to {state.case_id}"
        if not decision.approved:
            return "the approval is not valid"
        return None

    ctx.effect(
        "finalise_case",
        lambda key: service().finalise(
            state.case_id, str(action["decision"]), int(action["amount"]), key
        ),
        request=action,
        approval=decision,
        guard=revalidate,
        retry_safe=True,
    )
    state.outcome = "approved and finalised"
    return END


registry = WorkflowRegistry(case_review)
