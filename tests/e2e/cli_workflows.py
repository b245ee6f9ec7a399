"""Workflows for the CLI tests that start runs (``tether runs start --workflows``)."""

from __future__ import annotations

from pydantic import BaseModel

from tether.runs import END, RunContext, Workflow, WorkflowRegistry


class Payment(BaseModel):
    amount: int
    outcome: str = ""


payment: Workflow[Payment] = Workflow("payment", state=Payment)


@payment.node(start=True)
def ask(ctx: RunContext, state: Payment) -> str:
    decision = ctx.approval({"pay": state.amount}, rationale="a payment needs a person")
    state.outcome = "paid" if decision.approved else "refused"
    return END


registry = WorkflowRegistry(payment)
