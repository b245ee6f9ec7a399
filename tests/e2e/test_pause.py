"""A worker paused (SIGSTOP) inside an effect's call, past its lease, then resumed.

Another worker takes the run over while the paused one's call is in flight. The effect
must not be sent again unless it is retry-safe (the service dedupes its key), and the
paused worker, once resumed, must commit nothing: its call lands at the service, but the
run belongs to the other worker now.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.e2e.chaos_support import EffectService, Workers, wait_until
from tests.support import TestDatabase
from tether.principals import Role
from tether.runs import RunStatus
from tether.runs.models import InterruptReason, JournalKind, JournalStatus

LEASE_S = 0.5
EFFECT_S = 1.5
"""The call outlasts the lease three times over."""


@pytest.mark.parametrize("kind", ["reconcile", "plain", "retry_safe"])
def test_a_paused_worker_commits_nothing_and_its_effect_is_not_resent(
    backend: TestDatabase, tmp_path: Path, kind: str
) -> None:
    from tests.e2e.chaos_workflow import Progress, pause_workflow

    service = EffectService()
    workers = Workers(
        backend.url, service.start(), tmp_path, LEASE_S, {"CHAOS_EFFECT_S": str(EFFECT_S)}
    )
    with backend.open() as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.tenants.grant(alice, "agent", [Role.AGENT.value])
        agent = app.tenants.principal("acme", "agent")
        run_id = app.runs.start(agent, pause_workflow(kind), Progress()).run_id
    try:
        paused = workers.start(until_idle=True)
        wait_until(lambda: len(service.begun) == 1, 30, "the first call to begin")
        workers.live[paused].send_signal(signal.SIGSTOP)

        def lease_ran_out() -> bool:
            with backend.open() as app:
                run = app.runs.get(app.tenants.principal("acme", "alice"), run_id)
                return run.lease_expires_at is not None and run.lease_expires_at < app.clock.now()

        wait_until(lease_ran_out, 30, "the paused worker's lease to run out")
        taker = workers.start(until_idle=True)
        assert workers.live[taker].wait(60) == 0, workers.log_tail(taker)
        workers.live[paused].send_signal(signal.SIGCONT)
        assert workers.live[paused].wait(60) == 0, workers.log_tail(paused)

        with backend.open() as app:
            admin = app.tenants.principal("acme", "alice")
            run = app.runs.get(admin, run_id)
            [entry] = [e for e in app.runs.journal(admin, run_id) if e.kind is JournalKind.EFFECT]
            events = app.runs.events(admin, run_id)
            claims = [e.data["owner"] for e in events if e.type == "run.claimed"]
            waits = app.runs.waits(admin, run_id=run_id)
        (key,) = service.results
        assert claims == [paused, taker]
        assert service.applications[key] == 1
        if kind == "retry_safe":
            assert len(service.begun) == 2  # sent again under the same key, applied once
            assert run.status is RunStatus.COMPLETED
            assert entry.status is JournalStatus.DONE
            assert run.updated_by == taker
        else:
            assert len(service.begun) == 1, "the effect was sent again"
            assert run.status is RunStatus.PAUSED
            assert [w.reason for w in waits] == [InterruptReason.HUMAN_REVIEW]
            assert "may still be in flight" in waits[0].message
            assert entry.status is JournalStatus.INTENT  # the paused worker recorded nothing
            assert "effect.done" not in [e.type for e in events]
    finally:
        workers.stop_all()
        service.stop()
