"""Helpers for the run-engine conformance tests: a harness, a counting service, crashes.

The harness opens the test's database with a :class:`~tether.FakeClock`, so tests move
time past leases, backoffs and expiries without sleeping. The case service stands in for
the outside world: it counts every call per idempotency key and applies each key once,
which is how a real service deduplicates, so a test can tell "called again" (allowed for a
retry-safe effect) from "applied twice" (never allowed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support import TestDatabase, auditor
from tether import FakeClock, Tether
from tether.principals import Principal
from tether.runs import NOT_APPLIED, Executor, Run, RunStatus, Wait, WorkflowRegistry
from tether.runs.models import Checkpoint, JournalEntry, JournalStatus, RunEvent

START = datetime(2030, 3, 1, 9, 0, tzinfo=UTC)
TENANT = "acme"
LEASE = timedelta(seconds=60)
PAST_LEASE = LEASE + timedelta(seconds=1)


class Crash(BaseException):
    """A simulated ``kill -9``: nothing in the engine or a node may catch it."""


@dataclass
class FaultPlan:
    """The executor's ``faults`` hook: records every boundary, crashes at the N-th."""

    crash_at: int | None = None
    seen: list[tuple[str, str]] = field(default_factory=list)
    crashed: tuple[str, str] | None = None

    def __call__(self, point: str, key: str) -> None:
        index = len(self.seen)
        self.seen.append((point, key))
        if index == self.crash_at:
            self.crashed = (point, key)
            raise Crash(f"crash at boundary {index}: {point} {key}")


@dataclass
class CaseService:
    """A service that counts every call per key and applies each key once.

    ``recorded(key)`` (optional) says whether the engine has already recorded a result
    for that key; a call after that is a repeat the engine promised never to make.
    """

    recorded: Callable[[str], bool] | None = None
    calls: Counter[str] = field(default_factory=Counter)
    applied: dict[str, Any] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    late_calls: list[str] = field(default_factory=list)
    open_cases: set[str] = field(default_factory=set)

    def call(self, key: str, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        if self.recorded is not None and self.recorded(key):
            self.late_calls.append(key)
        self.calls[key] += 1
        self.order.append(key)
        if key not in self.applied:
            self.applied[key] = {"action": action, "applied": len(self.applied) + 1, **payload}
        return dict(self.applied[key])

    def lookup(self, key: str) -> Any:
        """The ``reconcile`` check: the stored result, or ``NOT_APPLIED``."""
        return dict(self.applied[key]) if key in self.applied else NOT_APPLIED

    def keys_for(self, name: str) -> list[str]:
        return sorted(key for key in self.calls if key.endswith(f":{name}"))


@dataclass
class Harness:
    """An opened database with a fake clock, one tenant and principals of every kind."""

    app: Tether
    clock: FakeClock
    admin: Principal
    agent: Principal
    approver: Principal
    second_approver: Principal
    operator: Principal
    viewer: Principal
    self_approving_agent: Principal

    def executor(self, registry: WorkflowRegistry, owner: str, **options: Any) -> Executor:
        return self.app.executor(registry, owner=owner, **options)

    def run(self, run_id: str) -> Run:
        return self.app.runs.get(self.admin, run_id)

    def events(self, run_id: str) -> list[RunEvent]:
        return self.app.runs.events(self.admin, run_id)

    def event_types(self, run_id: str) -> list[str]:
        return [event.type for event in self.events(run_id)]

    def journal(self, run_id: str) -> list[JournalEntry]:
        return self.app.runs.journal(self.admin, run_id)

    def checkpoints(self, run_id: str) -> list[Checkpoint]:
        return self.app.runs.checkpoints(self.admin, run_id)

    def state(self, run_id: str) -> dict[str, Any]:
        return self.app.runs.state(self.admin, run_id)

    def waits(self, run_id: str, *, status: Any = None) -> list[Wait]:
        return self.app.runs.waits(self.admin, run_id=run_id, status=status)

    def wait(self, wait_id: str) -> Wait:
        return self.app.runs.wait(self.admin, wait_id)

    def recorded(self, key: str) -> bool:
        """Whether storage holds a result for an effect key
        (``tenant-digest:run:node:visit:pos:name``)."""
        run_id = key.split(":")[1]
        return any(
            entry.idempotency_key == key and entry.status is JournalStatus.DONE
            for entry in self.journal(run_id)
        )

    def snapshot(self, run_id: str) -> tuple[Any, ...]:
        """Everything stored about a run, plus the tenant's audit trail."""
        return (
            self.run(run_id),
            self.events(run_id),
            self.journal(run_id),
            self.checkpoints(run_id),
            self.waits(run_id),
            self.app.audit.entries(auditor(TENANT), limit=10_000),
        )


@contextmanager
def open_harness(backend: TestDatabase, **settings: object) -> Iterator[Harness]:
    """The harness on ``backend``, opened with ``settings`` overrides."""
    clock = FakeClock(START)
    app = Tether.open(backend.settings(**settings), clock=clock)
    try:
        app.tenants.create(TENANT, admin="alice")
        admin = app.tenants.principal(TENANT, "alice")
        grants = {
            "agent-1": ["agent"],
            "sam": ["approver"],
            "sue": ["approver"],
            "olga": ["operator"],
            "vic": ["viewer"],
            "ada": ["agent", "approver"],
        }
        for principal_id, roles in grants.items():
            app.tenants.grant(admin, principal_id, roles)
        yield Harness(
            app=app,
            clock=clock,
            admin=admin,
            agent=app.tenants.principal(TENANT, "agent-1"),
            approver=app.tenants.principal(TENANT, "sam"),
            second_approver=app.tenants.principal(TENANT, "sue"),
            operator=app.tenants.principal(TENANT, "olga"),
            viewer=app.tenants.principal(TENANT, "vic"),
            self_approving_agent=app.tenants.principal(TENANT, "ada"),
        )
    finally:
        app.close()


def open_wait(h: Harness, run: Run) -> Wait:
    """The wait a run is parked on (it must be open)."""
    assert run.wait_id is not None, f"run {run.run_id} is {run.status} without a wait"
    wait = h.wait(run.wait_id)
    assert wait.status.value == "open"
    return wait


WAITING_STATUSES = {
    RunStatus.WAITING_FOR_USER,
    RunStatus.WAITING_FOR_APPROVAL,
    RunStatus.PAUSED,
    RunStatus.SCHEDULED,
}
