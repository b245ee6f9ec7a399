"""Housekeeping: the worker runs each tenant's retention pass when it is due, one worker
at a time per tenant, and audits each pass with its counts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from tests.conformance.test_run_retention import start_and_finish, workflow
from tests.runs_support import TENANT, Harness, open_harness
from tests.support import TestDatabase
from tether.errors import Conflict, PermissionDenied
from tether.housekeeping import LEASE
from tether.runs import WorkflowRegistry
from tether.runs.worker import Worker


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend, housekeeping_interval_s=3600) as harness:
        yield harness


def passes(h: Harness) -> list[dict[str, object]]:
    return [
        e.details
        for e in h.app.audit.entries(h.admin, limit=10_000)
        if e.action == "housekeeping.pass"
    ]


def test_the_worker_runs_a_due_pass_and_audits_its_counts(h: Harness) -> None:
    chat = workflow("chat")
    start_and_finish(h, chat, 3)
    h.app.retention.set_policy(h.admin, "chat", 1)
    h.app.working.set(h.admin, "session-1", "draft", {"n": 1}, ttl_s=60)
    h.app.working.set(h.admin, "session-1", "keep", {"n": 2})
    h.clock.advance(timedelta(days=2))
    executor = h.executor(WorkflowRegistry(chat), "worker-1")

    Worker(executor, h.app.runs, idle_tasks=h.app.idle_tasks("worker-1")).run(until_idle=True)

    (first,) = passes(h)
    assert first["working_purged"] == 1
    runs = first["runs"]
    assert isinstance(runs, dict)
    assert (runs["compacted"], runs["held"], runs["run_checkpoints"], runs["run_journal"]) == (
        3,
        0,
        6,
        3,
    )
    assert runs["run_events"] > 0
    assert set(first) == {"memory", "threads", "working_purged", "runs"}
    assert h.app.working.get(h.admin, "session-1", "keep") == {"n": 2}

    h.clock.advance(timedelta(minutes=30))
    assert h.app.housekeeping.run_due(owner="worker-1") == []
    h.clock.advance(timedelta(minutes=31))
    (again,) = h.app.housekeeping.run_due(owner="worker-2")
    assert again.runs["compacted"] == 0
    assert len(passes(h)) == 2


def test_one_worker_at_a_time_runs_a_tenants_pass(h: Harness) -> None:
    now = h.clock.now()
    with h.app.storage.transaction(TENANT) as txn:
        assert txn.acquire_housekeeping_lease(
            TENANT, owner="worker-1", now=now, lease_expires_at=now + LEASE, force=False
        )
    assert h.app.housekeeping.run_due(owner="worker-2") == []
    with pytest.raises(Conflict, match="running elsewhere"):
        h.app.housekeeping.run(h.operator, owner="cli")
    assert passes(h) == []

    h.clock.advance(LEASE + timedelta(seconds=1))
    (report,) = h.app.housekeeping.run_due(owner="worker-2")
    assert report.tenant_id == TENANT
    assert len(passes(h)) == 1


def test_a_pass_by_hand_needs_the_operator_role(h: Harness) -> None:
    with pytest.raises(PermissionDenied):
        h.app.housekeeping.run(h.viewer, owner="cli")
    report = h.app.housekeeping.run(h.operator, owner="cli")
    assert report.working_purged == 0
    entry = next(
        e for e in h.app.audit.entries(h.admin, limit=1000) if e.action == "housekeeping.pass"
    )
    assert entry.actor_id == h.operator.principal_id
