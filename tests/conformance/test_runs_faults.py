"""Storage faults inside a node are infrastructure faults, never node failures.

The fault is real: another connection holds the write lock (SQLite) or the run's row lock
(PostgreSQL, with a short ``lock_timeout``) past the time the worker waits for it, so the
worker's own commit fails with ``StorageUnavailable``. The effect's service starts the
holder from inside the call, so the fault hits the exact commit under test: the result
commit after an applied effect, or the intent commit before one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
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
    open_wait,
)
from tests.support import TestDatabase
from tether import Tether
from tether.errors import StorageUnavailable
from tether.runs import END, InterruptReason, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.models import JournalKind, JournalStatus
from tether.runs.worker import Worker

HOLD_S = 0.6
"""How long the lock holder keeps the lock: well past the worker's wait for it."""
WAIT_MS = 100
"""How long a worker waits for a lock (SQLite busy_timeout, PostgreSQL lock_timeout)."""


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    """The conformance harness on a database whose lock waits are short."""
    if backend.backend == "sqlite":
        with open_harness(backend, sqlite_busy_timeout_ms=WAIT_MS) as harness:
            yield harness
        return
    short = TestDatabase(
        "postgres",
        f"{backend.url}?options=-c%20lock_timeout%3D{WAIT_MS}",
        admin_url=backend.admin_url,
    )
    with open_harness(short) as harness:
        yield harness


class LockHolder:
    """Holds the database's write lock (SQLite) or a run's row lock (PostgreSQL) from
    another connection, in a thread, for ``HOLD_S``."""

    def __init__(self, db: TestDatabase) -> None:
        self.db = db
        self.threads: list[threading.Thread] = []

    def hold(self, run_id: str, *, table: bool = False) -> None:
        """Hold the lock; with ``table``, all of the runs table (PostgreSQL)."""
        held = threading.Event()
        thread = threading.Thread(target=self._hold, args=(run_id, table, held), daemon=True)
        thread.start()
        self.threads.append(thread)
        assert held.wait(10), "the lock holder never got the lock"

    def _hold(self, run_id: str, table: bool, held: threading.Event) -> None:
        with self.db.raw() as raw:
            if self.db.backend == "sqlite":
                raw.execute("BEGIN IMMEDIATE")
            elif table:
                raw.execute("BEGIN")
                raw.execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
            else:
                raw.execute("BEGIN")
                raw.execute("SELECT 1 FROM runs WHERE run_id = %s FOR UPDATE", (run_id,))
            held.set()
            time.sleep(HOLD_S)  # the fault's duration, not a wait for something
            raw.execute("ROLLBACK")

    def join(self) -> None:
        for thread in self.threads:
            thread.join(10)

    def on_first_call(
        self, then: Callable[[], None] = lambda: None
    ) -> Callable[[RunContext], None]:
        """A hook for ``note_workflow`` that holds the run's lock the first time it is
        called, then calls ``then``; later calls do nothing."""
        first = [True]

        def hook(ctx: RunContext) -> None:
            if first[0]:
                first[0] = False
                self.hold(ctx.run_id)
                then()

        return hook


class Note(BaseModel):
    note: dict[str, Any] | None = None
    after: bool = False


def note_workflow(
    service: CaseService,
    options: dict[str, Any],
    before_call: Callable[[RunContext], None] = lambda ctx: None,
    during_call: Callable[[RunContext], None] = lambda ctx: None,
    swallow: bool = False,
) -> Workflow[Note]:
    wf: Workflow[Note] = Workflow("note", state=Note)

    @wf.node(start=True)
    def write(ctx: RunContext, s: Note) -> str:
        def create(key: str) -> dict[str, Any]:
            during_call(ctx)
            return service.call(key, "create_case_note", {"text": "hello"})

        before_call(ctx)
        try:
            s.note = ctx.effect("create_case_note", create, request={"text": "hello"}, **options)
        except Exception:
            if not swallow:
                raise
        return "after"

    @wf.node
    def after(ctx: RunContext, s: Note) -> str:
        s.after = True
        return END

    return wf


MODES = {
    "retry_safe": lambda service: {"retry_safe": True},
    "review": lambda service: {},
    "reconcile": lambda service: {"reconcile": service.lookup},
}


@pytest.mark.parametrize("mode", list(MODES))
def test_a_lock_held_past_the_timeout_at_the_result_commit_does_not_fail_the_run(
    h: Harness, backend: TestDatabase, mode: str
) -> None:
    service = CaseService(recorded=h.recorded)
    holder = LockHolder(backend)
    registry = WorkflowRegistry(
        note_workflow(service, MODES[mode](service), during_call=holder.on_first_call())
    )
    run = h.app.runs.start(h.agent, registry.get("note"), Note())
    executor = h.executor(registry, "worker-1")

    handed_back = executor.execute(TENANT, run.run_id)
    holder.join()

    assert handed_back.status is RunStatus.SCHEDULED, handed_back.error
    assert handed_back.storage_faults == 1
    assert handed_back.lease_owner is None
    assert "run.storage_fault" in h.event_types(run.run_id)
    assert "run.failed" not in h.event_types(run.run_id)
    assert executor.storage_faults == 1
    (key,) = service.calls
    assert service.calls[key] == 1
    [intent] = [e for e in h.journal(run.run_id) if e.kind is JournalKind.EFFECT]
    assert intent.status is JournalStatus.INTENT

    resumed = h.executor(registry, "worker-2").execute(TENANT, run.run_id)

    if mode == "review":
        assert resumed.status is RunStatus.PAUSED
        wait = open_wait(h, resumed)
        assert wait.reason is InterruptReason.HUMAN_REVIEW
        assert service.calls[key] == 1
        h.app.runs.answer(h.approver, wait.wait_id, {"result": service.lookup(key)})
        resumed = h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    assert resumed.status is RunStatus.COMPLETED, resumed.error
    assert resumed.storage_faults == 0
    assert len(service.applied) == 1
    assert service.calls[key] == (2 if mode == "retry_safe" else 1)
    assert service.late_calls == []
    assert h.state(run.run_id)["note"] == service.applied[key]


def test_a_lock_held_past_the_timeout_at_the_intent_commit_calls_nothing(
    h: Harness, backend: TestDatabase
) -> None:
    service = CaseService(recorded=h.recorded)
    holder = LockHolder(backend)
    registry = WorkflowRegistry(note_workflow(service, {}, before_call=holder.on_first_call()))
    run = h.app.runs.start(h.agent, registry.get("note"), Note())

    handed_back = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    holder.join()

    assert handed_back.status is RunStatus.SCHEDULED
    assert service.calls == {}
    done = h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED, done.error
    assert list(service.calls.values()) == [1]


def test_a_call_over_before_a_storage_fault_is_sent_again_when_reconcile_says_not_applied(
    h: Harness, backend: TestDatabase
) -> None:
    """The call raised (the service refused it) and the commit of its failure hit the
    fault: the worker hands the run back with the intent marked as ended, so the next
    claim trusts "not applied" and sends the effect again at once, without a review."""
    service = CaseService(recorded=h.recorded)
    holder = LockHolder(backend)

    def refuse() -> None:
        raise ConnectionError("the service refused the call")

    refuse_once = holder.on_first_call(refuse)
    registry = WorkflowRegistry(
        note_workflow(service, {"reconcile": service.lookup}, during_call=refuse_once)
    )
    run = h.app.runs.start(h.agent, registry.get("note"), Note())

    handed_back = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    holder.join()

    assert handed_back.status is RunStatus.SCHEDULED, handed_back.error
    [intent] = [e for e in h.journal(run.run_id) if e.kind is JournalKind.EFFECT]
    assert intent.status is JournalStatus.INTENT and intent.finished_at is not None
    (pending,) = h.app.runbook.inspect(h.operator, run.run_id).pending_effects
    assert (pending.interrupted, pending.label) == (False, "unknown")
    assert service.calls == {}
    done = h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED, done.error
    assert dict(service.calls) == {intent.idempotency_key: 1}
    assert h.waits(run.run_id) == []


def test_a_node_that_catches_the_storage_fault_still_stops(
    h: Harness, backend: TestDatabase
) -> None:
    service = CaseService(recorded=h.recorded)
    holder = LockHolder(backend)
    first = [True]

    def hold_once(ctx: RunContext) -> None:
        if first[0]:
            first[0] = False
            holder.hold(ctx.run_id)

    registry = WorkflowRegistry(
        note_workflow(service, {"retry_safe": True}, during_call=hold_once, swallow=True)
    )
    run = h.app.runs.start(h.agent, registry.get("note"), Note())

    handed_back = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    holder.join()

    assert handed_back.status is RunStatus.SCHEDULED
    assert h.state(run.run_id)["after"] is False
    done = h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert h.state(run.run_id)["note"] is not None


def test_a_storage_fault_that_keeps_coming_back_sends_the_run_to_review(
    h: Harness, backend: TestDatabase
) -> None:
    service = CaseService(recorded=h.recorded)
    holder = LockHolder(backend)
    broken = [True]

    def hold_while_broken(ctx: RunContext) -> None:
        if broken[0]:
            holder.hold(ctx.run_id)

    registry = WorkflowRegistry(note_workflow(service, {}, before_call=hold_while_broken))
    run = h.app.runs.start(h.agent, registry.get("note"), Note())
    executor = h.executor(registry, "worker-1", max_storage_faults=3)

    statuses = []
    for _ in range(4):
        statuses.append(executor.execute(TENANT, run.run_id).status)
        holder.join()
        h.clock.advance(PAST_LEASE)  # past any backoff

    assert statuses[:3] == [RunStatus.SCHEDULED] * 3
    assert statuses[3] is RunStatus.PAUSED
    wait = open_wait(h, h.run(run.run_id))
    assert wait.reason is InterruptReason.HUMAN_REVIEW
    assert wait.request == {"error": StorageUnavailable.code, "faults": 3}
    assert "storage failed 3 times in a row" in wait.message
    assert service.calls == {}
    assert executor.execute(TENANT, run.run_id).status is RunStatus.PAUSED

    broken[0] = False
    h.app.runs.answer(h.operator, wait.wait_id, "the database is fixed")
    done = executor.execute(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED, done.error
    assert list(service.calls.values()) == [1]


def test_a_worker_keeps_going_while_storage_is_unavailable(
    h: Harness, backend: TestDatabase
) -> None:
    service = CaseService(recorded=h.recorded)
    registry = WorkflowRegistry(note_workflow(service, {}))
    runs = [h.app.runs.start(h.agent, registry.get("note"), Note()) for _ in range(2)]
    holder = LockHolder(backend)
    holder.hold(runs[0].run_id, table=True)
    worker = Worker(h.executor(registry, "worker-1"), h.app.runs, poll_s=0.01)
    worker.backoff.first_s = 0.01

    worker.run(until_idle=True)
    holder.join()

    assert all(h.run(r.run_id).status is RunStatus.COMPLETED for r in runs)
    assert worker.storage_faults >= 1  # the claim itself ran into the lock
    assert len(service.applied) == 2


def test_a_run_whose_lease_ran_out_is_claimed_before_older_work(h: Harness) -> None:
    service = CaseService(recorded=h.recorded)
    registry = WorkflowRegistry(note_workflow(service, {"retry_safe": True}))
    backlog = [h.app.runs.start(h.agent, registry.get("note"), Note()) for _ in range(5)]
    h.clock.advance(PAST_LEASE)
    stalled = h.app.runs.start(h.agent, registry.get("note"), Note())
    plan = FaultPlan(crash_at=0)
    with pytest.raises(Crash):
        h.executor(registry, "worker-1", faults=plan).execute(TENANT, stalled.run_id)
    h.clock.advance(PAST_LEASE)

    first = h.executor(registry, "worker-2").execute_next()

    assert first is not None and first.run_id == stalled.run_id
    assert {h.run(r.run_id).status for r in backlog} == {RunStatus.QUEUED}


def test_an_effect_slower_than_the_lease_is_not_sent_again(backend: TestDatabase) -> None:
    lease_s = 0.4
    app = Tether.open(backend.settings())
    try:
        app.tenants.create(TENANT, admin="alice")
        admin = app.tenants.principal(TENANT, "alice")
        app.tenants.grant(admin, "agent-1", ["agent"])
        agent = app.tenants.principal(TENANT, "agent-1")
        service = CaseService()
        entered, finished = threading.Event(), threading.Event()

        def slow(ctx: RunContext) -> None:
            entered.set()
            time.sleep(3 * lease_s)  # the slow call itself

        registry = WorkflowRegistry(note_workflow(service, {}, during_call=slow))
        run = app.runs.start(agent, registry.get("note"), Note())
        first = app.executor(registry, owner="worker-1", lease_s=lease_s)
        second = app.executor(registry, owner="worker-2", lease_s=lease_s)
        outcome: list[Any] = []

        def drive() -> None:
            outcome.append(first.execute(TENANT, run.run_id))
            finished.set()

        thread = threading.Thread(target=drive, daemon=True)
        thread.start()
        assert entered.wait(10)
        taken = []
        while not finished.is_set():
            taken.append(second.execute_next())
            finished.wait(lease_s / 8)
        thread.join(10)

        assert taken and all(found is None for found in taken)
        assert outcome[0].status is RunStatus.COMPLETED, outcome[0].error
        assert first.heartbeat.renewals >= 1
        assert list(service.calls.values()) == [1]
    finally:
        app.close()


def test_an_effect_whose_lease_was_taken_over_mid_call_goes_to_review_not_resent(
    h: Harness,
) -> None:
    """A worker stalls inside the call past its lease (a paused process: no heartbeat);
    another takes over, finds the intent open and reconcile says not applied yet."""
    service = CaseService(recorded=h.recorded)
    release = threading.Event()
    entered = threading.Event()
    stalled = [True]

    def stall(ctx: RunContext) -> None:
        if stalled[0]:
            stalled[0] = False
            entered.set()
            assert release.wait(10)

    registry = WorkflowRegistry(
        note_workflow(service, {"reconcile": service.lookup}, during_call=stall)
    )
    run = h.app.runs.start(h.agent, registry.get("note"), Note())
    paused = h.executor(registry, "worker-1")
    outcome: list[Any] = []
    thread = threading.Thread(
        target=lambda: outcome.append(paused.execute(TENANT, run.run_id)), daemon=True
    )
    thread.start()
    assert entered.wait(10)
    h.clock.advance(PAST_LEASE)

    taker = h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    release.set()
    thread.join(10)

    assert taker.status is RunStatus.PAUSED
    wait = open_wait(h, taker)
    assert wait.reason is InterruptReason.HUMAN_REVIEW
    assert "may still be in flight" in wait.message
    (key,) = service.calls
    assert service.calls[key] == 1, "the effect was sent again while its call was in flight"
    assert outcome, "the stalled worker did not stop"
    assert "effect.done" not in h.event_types(run.run_id)  # the stalled worker wrote nothing
    h.app.runs.answer(h.approver, wait.wait_id, {"result": service.lookup(key)})
    done = h.executor(registry, "worker-3").execute(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert service.calls[key] == 1


def test_each_claim_gets_a_larger_fencing_token(h: Harness) -> None:
    service = CaseService(recorded=h.recorded)
    tokens: list[int] = []

    def remember(ctx: RunContext) -> None:
        tokens.append(ctx.fencing_token)
        if len(tokens) == 1:
            raise Crash("killed inside the call")

    registry = WorkflowRegistry(note_workflow(service, {"retry_safe": True}, during_call=remember))
    run = h.app.runs.start(h.agent, registry.get("note"), Note())
    with pytest.raises(Crash):
        h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    h.clock.advance(PAST_LEASE)
    assert h.executor(registry, "worker-2").execute(TENANT, run.run_id).status is (
        RunStatus.COMPLETED
    )

    assert len(tokens) == 2 and tokens[0] < tokens[1]
    intents = [e.data for e in h.events(run.run_id) if e.type == "effect.intent"]
    assert [i["fence"] for i in intents] == tokens
