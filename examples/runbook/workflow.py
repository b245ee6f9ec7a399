"""Payouts and refunds, and a bank that remembers every idempotency key it was sent.

payout: ``check`` -> ``pay`` (a bank transfer, then its fee) -> ``notify`` (a receipt).
Version 1 looks the fee up by the payee's country and knows only Germany, so a payout to
France fails after its transfer went through. Version 2 is the fix: its state gains a
``currency`` (state version 2; the upgrade function gives older states ``EUR``) and the
fee goes by currency. Both versions make the same transfer, so a run moved from 1 to 2
replays it from its journal.

refund: a supervisor approves (within an hour), then the refund is sent; an approval that
expired fails the run.

``registry`` is what the workers run at first; ``fixed`` adds payout version 2.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from tether.runs import END, RetryPolicy, RunContext, Workflow, WorkflowRegistry


@dataclass
class Bank:
    """The outside world: applies each idempotency key once and counts every call."""

    calls: Counter[str] = field(default_factory=Counter)
    applied: dict[str, dict[str, Any]] = field(default_factory=dict)

    def send(self, key: str, what: str, **details: Any) -> dict[str, Any]:
        self.calls[key] += 1
        if key not in self.applied:
            self.applied[key] = {what: f"{what[:2].upper()}-{len(self.applied) + 1:04d}", **details}
        return dict(self.applied[key])


BANK = Bank()
FEES_BY_COUNTRY = {"de": 0}
FEES_BY_CURRENCY = {"EUR": 0}


class Payout(BaseModel):
    payee: str
    amount: int
    checked: bool = False
    transfer: dict[str, Any] | None = None
    fee: int | None = None
    receipt: dict[str, Any] | None = None


class PayoutV2(Payout):
    currency: str


def _check(ctx: RunContext, s: Payout) -> str:
    s.checked = ctx.step("check_payee", lambda: True)
    return "pay"


def _transfer(ctx: RunContext, s: Payout) -> dict[str, Any]:
    request = {"payee": s.payee, "amount": s.amount}
    return ctx.effect(
        "transfer", lambda key: BANK.send(key, "transfer", **request), request=request
    )


def _notify(ctx: RunContext, s: Payout) -> str:
    s.receipt = ctx.effect(
        "send_receipt", lambda key: BANK.send(key, "receipt", to=s.payee), request=s.payee
    )
    return END


RETRY = RetryPolicy(max_attempts=2, backoff_s=30, jitter=0)

payout: Workflow[Payout] = Workflow("payout", state=Payout, version=1)
payout.node(_check, name="check", start=True)
payout.node(_notify, name="notify")


@payout.node(retry=RETRY)
def pay(ctx: RunContext, s: Payout) -> str:
    s.transfer = _transfer(ctx, s)
    s.fee = FEES_BY_COUNTRY[s.payee.split("-")[0]]
    return "notify"


payout_v2: Workflow[PayoutV2] = Workflow(
    "payout",
    state=PayoutV2,
    version=2,
    state_version=2,
    upgrades={1: lambda old: {**old, "currency": "EUR"}},
)
payout_v2.node(_check, name="check", start=True)
payout_v2.node(_notify, name="notify")


@payout_v2.node(name="pay", retry=RETRY)
def pay_v2(ctx: RunContext, s: PayoutV2) -> str:
    s.transfer = _transfer(ctx, s)
    s.fee = FEES_BY_CURRENCY[s.currency]
    return "notify"


class Refund(BaseModel):
    order: str
    amount: int
    refund: dict[str, Any] | None = None


refund: Workflow[Refund] = Workflow("refund", state=Refund)


@refund.node(start=True)
def approve_and_refund(ctx: RunContext, s: Refund) -> str:
    action = {"refund": s.order, "amount": s.amount}
    decision = ctx.approval(
        action, rationale="the parcel arrived damaged", expires_in=timedelta(hours=1)
    )
    if not decision.approved:
        raise RuntimeError(f"approval {decision.approval_id} was {decision.status.value}")
    s.refund = ctx.effect(
        "refund", lambda key: BANK.send(key, "refund", **action), request=action, approval=decision
    )
    return END


registry = WorkflowRegistry(payout, refund)
fixed = WorkflowRegistry(payout, payout_v2, refund)
