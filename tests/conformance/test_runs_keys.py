"""Idempotency keys and run ids across tenants, on every backend.

A service deduplicates effects by idempotency key alone: it does not know Tether's
tenants. Two tenants must therefore never send it the same key, even when their callers
choose the same run id; and calls journaled under the older key scheme (no tenant in the
key) must be re-sent under the key the service already saw.
"""

from __future__ import annotations

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

CHOSEN_RUN_ID = "0190f000-0000-7000-8000-000000000042"


class PayState(BaseModel):
    amount: int
    paid: dict[str, Any] | None = None


def pay_once(service: CaseService) -> Workflow[PayState]:
    wf: Workflow[PayState] = Workflow("pay_once", state=PayState)

    @wf.node(start=True)
    def pay(ctx: RunContext, s: PayState) -> str:
        s.paid = ctx.effect(
            "pay",
            lambda key: service.call(key, "pay", {"amount": s.amount}),
            request={"amount": s.amount},
            retry_safe=True,
        )
        return END

    return wf


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


def test_two_tenants_with_the_same_run_id_send_different_keys(h: Harness) -> None:
    service = CaseService()
    wf = pay_once(service)
    registry = WorkflowRegistry(wf)
    h.app.tenants.create("globex", admin="gina")
    h.app.tenants.grant(h.app.tenants.principal("globex", "gina"), "bot", ["agent"])
    globex_agent = h.app.tenants.principal("globex", "bot")

    ours = h.app.runs.start(h.agent, wf, PayState(amount=100), run_id=CHOSEN_RUN_ID)
    theirs = h.app.runs.start(globex_agent, wf, PayState(amount=999), run_id=CHOSEN_RUN_ID)
    done_ours = h.executor(registry, "worker-1").execute(TENANT, ours.run_id)
    done_theirs = h.executor(registry, "worker-1").execute("globex", theirs.run_id)

    keys = service.keys_for("pay")
    assert done_ours.status is RunStatus.COMPLETED
    assert done_theirs.status is RunStatus.COMPLETED
    assert len(keys) == 2
    assert all(CHOSEN_RUN_ID in key for key in keys)
    assert h.state(ours.run_id)["paid"]["amount"] == 100
    assert h.app.runs.state(globex_agent, theirs.run_id)["paid"]["amount"] == 999


def test_a_call_journaled_under_the_older_key_is_resent_under_that_key(
    h: Harness, backend: TestDatabase
) -> None:
    service = CaseService()
    wf = pay_once(service)
    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, PayState(amount=100))
    plan = FaultPlan(crash_at=1)
    with pytest.raises(Crash):
        h.executor(registry, "worker-1", faults=plan).execute(TENANT, run.run_id)
    assert plan.crashed is not None and plan.crashed[0] == "after_intent"
    [intent] = [e for e in h.journal(run.run_id) if e.name == "pay"]
    older_key = f"{run.run_id}:{intent.node}:{intent.visit}:{intent.position}:pay"
    with backend.raw() as raw:
        raw.execute(
            "UPDATE run_journal SET idempotency_key = ? WHERE tenant_id = ? AND run_id = ? "
            "AND position = ?",
            [older_key, TENANT, run.run_id, intent.position],
        )
    h.clock.advance(PAST_LEASE)

    after = h.executor(registry, "worker-2").execute(TENANT, run.run_id)

    assert after.status is RunStatus.COMPLETED
    assert list(service.calls) == [older_key]
    [done] = [e for e in h.journal(run.run_id) if e.name == "pay"]
    assert done.idempotency_key == older_key


def test_new_keys_name_the_tenant_by_digest_not_by_name(h: Harness) -> None:
    service = CaseService()
    wf = pay_once(service)
    run = h.app.runs.start(h.agent, wf, PayState(amount=1))

    h.executor(WorkflowRegistry(wf), "worker-1").execute(TENANT, run.run_id)

    [key] = service.keys_for("pay")
    digest, run_id, *_ = key.split(":")
    assert run_id == run.run_id
    assert len(digest) == 16
    assert TENANT not in digest
