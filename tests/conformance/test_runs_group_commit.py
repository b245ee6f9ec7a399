"""Group commit: the steps of several executors of one process share a transaction.

Each test lines a batch up on purpose: a first step (the plug) is held before its commit
while the steps under test queue behind it, so they are committed together by the next
leader. Within that batch each step keeps its own guard: a step whose lease was lost or
whose run was cancelled is rolled back alone and its executor sees the error it sees when
committing alone, while the batch's other steps commit. A crash between the batch's
statements and its commit loses nothing any caller was told was durable, and no caller is
told a lost step was.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import PAST_LEASE, TENANT, Crash, Harness, open_harness
from tests.support import TestDatabase
from tether.errors import InvalidInput, StorageUnavailable
from tether.runs import END, Run, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.models import (
    InterruptReason,
    JournalEntry,
    JournalKind,
    JournalStatus,
    Wait,
    WaitStatus,
)
from tether.runs.worker import Worker, run_workers
from tether.storage._group_commit import StepOutcome
from tether.storage.rows import StepWrite

TIMEOUT_S = 20.0


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Trail(BaseModel):
    seen: list[str] = []


def two_nodes() -> Workflow[Trail]:
    wf: Workflow[Trail] = Workflow("two", state=Trail)

    @wf.node(start=True)
    def first(ctx: RunContext, s: Trail) -> str:
        s.seen.append("first")
        return "second"

    @wf.node
    def second(ctx: RunContext, s: Trail) -> str:
        s.seen.append("second")
        return END

    return wf


def one_node() -> Workflow[Trail]:
    """The plug's workflow: one step, so the plug writes nothing after its held commit."""
    wf: Workflow[Trail] = Workflow("one", state=Trail)

    @wf.node(start=True)
    def only(ctx: RunContext, s: Trail) -> str:
        s.seen.append("only")
        return END

    return wf


def poll(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


class Plug:
    """Holds the first commit of the storage's group committer until released, so the
    steps written meanwhile queue and go together in the next one. Records every batch."""

    def __init__(self, storage: Any) -> None:
        self.committer = storage.step_commits
        self._commit = self.committer._commit_batch
        self.batches: list[list[str]] = []
        self.holding = threading.Event()
        self.release = threading.Event()
        self.committer._commit_batch = self

    def __call__(self, writes: Sequence[StepWrite]) -> list[StepOutcome]:
        self.batches.append([w.run.run_id for w in writes])
        if len(self.batches) == 1:
            self.holding.set()
            assert self.release.wait(TIMEOUT_S), "the test never released the plug"
        outcomes: list[StepOutcome] = self._commit(writes)
        return outcomes

    def wait_queued(self, steps: int) -> None:
        poll(lambda: self.committer.queued >= steps)


def in_thread(results: dict[str, Any], name: str, work: Callable[[], Any]) -> threading.Thread:
    def target() -> None:
        try:
            results[name] = work()
        except BaseException as exc:  # reported to the test thread
            results[name] = exc

    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread


def start_runs(h: Harness, wf: Workflow[Trail], count: int) -> list[Run]:
    return [h.app.runs.start(h.agent, wf, Trail()) for _ in range(count)]


def line_up(
    h: Harness, registry: WorkflowRegistry, plug_run: Run, runs: Sequence[Run]
) -> tuple[dict[str, Any], list[threading.Thread]]:
    """Start the plug run's executor, wait until its first step is held, then start one
    executor per run and wait until all their first steps are queued behind it."""
    results: dict[str, Any] = {}
    threads = [
        in_thread(
            results,
            plug_run.run_id,
            lambda: h.executor(registry, "plug").execute(TENANT, plug_run.run_id),
        )
    ]
    plug: Plug = h.app.storage.step_commits._commit_batch  # type: ignore[attr-defined]
    assert plug.holding.wait(TIMEOUT_S)
    for index, run in enumerate(runs):
        executor = h.executor(registry, f"worker-{index}")
        threads.append(
            in_thread(
                results,
                run.run_id,
                lambda executor=executor, run=run: executor.execute(TENANT, run.run_id),
            )
        )
    plug.wait_queued(len(runs))
    return results, threads


def join(threads: Sequence[threading.Thread]) -> None:
    for thread in threads:
        thread.join(TIMEOUT_S)
        assert not thread.is_alive(), f"{thread.name} did not finish"


def test_several_claims_in_one_process_share_commits(h: Harness) -> None:
    wf = two_nodes()
    registry = WorkflowRegistry(wf)
    runs = start_runs(h, wf, 8)
    plug = Plug(h.app.storage)
    workers = [
        Worker(h.executor(registry, f"worker-{i}"), h.app.runs, poll_s=0.01) for i in range(4)
    ]
    results: dict[str, Any] = {}
    thread = in_thread(results, "workers", lambda: run_workers(workers, until_idle=True))
    assert plug.holding.wait(TIMEOUT_S)
    plug.wait_queued(3)
    plug.release.set()
    join([thread])

    assert results["workers"] == 8
    assert len(plug.batches[1]) >= 3
    assert sum(len(batch) for batch in plug.batches) == 16
    for run in runs:
        stored = h.run(run.run_id)
        assert stored.status is RunStatus.COMPLETED
        assert stored.steps == 2
        assert h.state(run.run_id) == {"seen": ["first", "second"]}
        assert [c.seq for c in h.checkpoints(run.run_id)] == [0, 1, 2]
        events = h.events(run.run_id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert [e.type for e in events].count("node.completed") == 2


@pytest.mark.parametrize("fault", ["lease_lost", "cancelled"])
def test_a_step_whose_guard_fails_is_rolled_back_alone(h: Harness, fault: str) -> None:
    wf, plug_wf = two_nodes(), one_node()
    registry = WorkflowRegistry(wf, plug_wf)
    plug_run = h.app.runs.start(h.agent, plug_wf, Trail())
    kept, lost = start_runs(h, wf, 2)
    plug = Plug(h.app.storage)
    _, threads = line_up(h, registry, plug_run, [kept, lost])
    before = h.snapshot(lost.run_id)

    h.clock.advance(PAST_LEASE)
    if fault == "lease_lost":
        with h.app.storage.transaction(TENANT) as txn:
            thief = txn.claim_run(
                TENANT,
                lost.run_id,
                owner="thief",
                lease_expires_at=h.clock.now() + PAST_LEASE,
                now=h.clock.now(),
                workflow_keys=registry.keys,
            )
        assert thief is not None
    else:
        h.app.runbook.cancel(h.operator, lost.run_id, reason="customer withdrew")
    plug.release.set()
    join(threads)

    assert sorted(plug.batches[1]) == sorted([kept.run_id, lost.run_id])
    assert h.run(plug_run.run_id).status is RunStatus.COMPLETED
    assert h.run(kept.run_id).status is RunStatus.COMPLETED
    assert h.state(kept.run_id) == {"seen": ["first", "second"]}
    assert [c.seq for c in h.checkpoints(kept.run_id)] == [0, 1, 2]
    assert [c.seq for c in h.checkpoints(lost.run_id)] == [0]
    assert "node.completed" not in h.event_types(lost.run_id)
    stored = h.run(lost.run_id)
    if fault == "lease_lost":
        # Nothing of the failed step was written: only the thief's claim changed the run.
        assert stored.lease_owner == "thief"
        assert stored.version == before[0].version + 1
        assert stored.steps == 0
        h.clock.advance(PAST_LEASE * 2)
        assert h.executor(registry, "finisher").execute(TENANT, lost.run_id).status is (
            RunStatus.COMPLETED
        )
        assert h.state(lost.run_id) == {"seen": ["first", "second"]}
    else:
        assert stored.status is RunStatus.CANCELLED
        assert stored.steps == 0
        assert h.event_types(lost.run_id)[-1] == "run.cancelled"


def test_every_kind_of_row_a_step_writes_commits_in_a_batch(h: Harness) -> None:
    """Journal entries, a new wait and child runs with their checkpoints and events ride
    in one batch with plain checkpoints, and each lands."""
    chain, plug_wf = two_nodes(), one_node()
    asking: Workflow[Trail] = Workflow("asking", state=Trail)
    parent: Workflow[Trail] = Workflow("parent", state=Trail)

    @asking.node(start=True)
    def ask(ctx: RunContext, s: Trail) -> str:
        s.seen.append(ctx.step("note", lambda: "noted"))
        ctx.interrupt("clarification_required", "which one?")
        return END

    @parent.node(start=True)
    def delegate(ctx: RunContext, s: Trail) -> str:
        ctx.children.start(chain, [Trail(), Trail()], parallel=True)
        return END

    registry = WorkflowRegistry(chain, plug_wf, asking, parent)
    plug_run = h.app.runs.start(h.agent, plug_wf, Trail())
    plain = h.app.runs.start(h.agent, chain, Trail())
    asker = h.app.runs.start(h.agent, asking, Trail())
    boss = h.app.runs.start(h.agent, parent, Trail())
    plug = Plug(h.app.storage)
    _, threads = line_up(h, registry, plug_run, [plain, asker, boss])
    plug.release.set()
    join(threads)

    assert sorted(plug.batches[1]) == sorted([plain.run_id, asker.run_id, boss.run_id])
    assert [c.seq for c in h.checkpoints(plain.run_id)] == [0, 1, 2]
    waiting = h.run(asker.run_id)
    assert waiting.status is RunStatus.WAITING_FOR_USER
    assert [w.message for w in h.waits(asker.run_id)] == ["which one?"]
    assert [(e.name, e.result) for e in h.journal(asker.run_id) if e.name == "note"] == [
        ("note", '"noted"')
    ]
    assert h.run(boss.run_id).status is RunStatus.WAITING_FOR_CHILDREN
    children = [r for r in h.app.runs.all(h.admin, limit=100) if r.parent_run_id == boss.run_id]
    assert len(children) == 2
    for child in children:
        assert child.status is RunStatus.QUEUED
        assert [c.seq for c in h.checkpoints(child.run_id)] == [0]
        assert h.event_types(child.run_id)[:1] == ["run.created"]


def claimed(h: Harness, run: Run, owner: str) -> Run:
    with h.app.storage.transaction(TENANT) as txn:
        taken = txn.claim_run(
            TENANT,
            run.run_id,
            owner=owner,
            lease_expires_at=h.clock.now() + PAST_LEASE,
            now=h.clock.now(),
            workflow_keys=[f"{run.workflow}@{run.workflow_version}"],
        )
    assert taken is not None
    return taken


def test_a_step_with_values_storage_refuses_is_refused_alone_in_a_batch(h: Harness) -> None:
    """The storage net under the engine's own checks: a step that binds text no backend
    stores faithfully (a NUL, a lone surrogate) or untrusted JSON the canonical encoding
    refuses gets InvalidInput, on both backends, and writes nothing; the batch's other
    steps commit."""
    wf = two_nodes()
    plug_run, *plain = [claimed(h, run, "w") for run in start_runs(h, wf, 3)]
    hostile = [claimed(h, run, "w") for run in start_runs(h, wf, 3)]

    def step(run: Run, **changes: Any) -> StepWrite:
        new = run.model_copy(update={"version": run.version + 1, "steps": 1, **changes})
        return StepWrite(new, expected_version=run.version, expected_owner="w", cancellable=True)

    journal = JournalEntry(
        tenant_id=TENANT, run_id=hostile[1].run_id, node="first", visit=1, position=1,
        name="look up \udc80", kind=JournalKind.STEP, idempotency_key="k",
        status=JournalStatus.DONE, request_digest="", result="1", error=None, retry_safe=False,
        started_at=h.clock.now(), finished_at=None, duration_ms=None, tokens_in=None,
        tokens_out=None, cost_usd=None, wait_id=None,
    )  # fmt: skip
    wait = Wait(
        tenant_id=TENANT, wait_id=str(uuid.uuid4()), run_id=hostile[2].run_id, node="first",
        visit=1, position=0, kind=JournalKind.INTERRUPT,
        reason=InterruptReason.CLARIFICATION_REQUIRED, status=WaitStatus.OPEN,
        message="Which one?", request={"seen": "Ann\x00"}, action_digest=None,
        approver_role=None, requested_by="agent", resume_at=None, expires_at=None,
        created_at=h.clock.now(), resolved_at=None, resolved_by=None, resolution=None,
    )  # fmt: skip
    writes = {
        plug_run.run_id: step(plug_run),
        **{run.run_id: step(run) for run in plain},
        hostile[0].run_id: step(hostile[0], error="bad \x00 text"),
        hostile[1].run_id: dataclasses.replace(step(hostile[1]), journal=[journal]),
        hostile[2].run_id: dataclasses.replace(step(hostile[2]), waits=[wait]),
    }
    plug = Plug(h.app.storage)
    results: dict[str, Any] = {}
    storage = h.app.storage
    threads = [
        in_thread(results, plug_run.run_id, lambda: storage.write_step(writes[plug_run.run_id]))
    ]
    assert plug.holding.wait(TIMEOUT_S)
    for run in [*plain, *hostile]:
        write = writes[run.run_id]
        threads.append(in_thread(results, run.run_id, lambda w=write: storage.write_step(w)))
    plug.wait_queued(len(plain) + len(hostile))
    plug.release.set()
    join(threads)

    assert sorted(plug.batches[1]) == sorted(run.run_id for run in [*plain, *hostile])
    for run in plain:
        assert results[run.run_id] == (run.version + 1, False)
        assert h.run(run.run_id).steps == 1
    for run, field in zip(hostile, ["error", "name", "value.seen"], strict=True):
        refused = results[run.run_id]
        assert isinstance(refused, InvalidInput)
        assert refused.message.startswith(f"{field} ")
        stored = h.run(run.run_id)
        assert (stored.version, stored.steps, stored.error) == (run.version, 0, None)
        assert h.journal(run.run_id) == []
        assert h.waits(run.run_id) == []
    for run in hostile:  # alone, as a lone step commits, the same
        with pytest.raises(InvalidInput):
            storage.write_step(writes[run.run_id])
    assert [h.run(run.run_id).version for run in hostile] == [run.version for run in hostile]


def fail_batch_of_two(
    h: Harness, error: BaseException
) -> tuple[WorkflowRegistry, Run, list[Run], dict[str, Any]]:
    """Line two runs' first steps up in one batch and raise ``error`` between the batch's
    statements and its commit. The registry, the plug's run, the two runs, each
    executor's result (its run, or what it raised)."""
    wf, plug_wf = two_nodes(), one_node()
    registry = WorkflowRegistry(wf, plug_wf)
    plug_run = h.app.runs.start(h.agent, plug_wf, Trail())
    runs = start_runs(h, wf, 2)
    plug = Plug(h.app.storage)
    storage: Any = h.app.storage

    def fail(point: str, steps: int) -> None:
        assert point == "before_commit"
        if steps == 2:
            storage.step_faults = None
            raise error

    storage.step_faults = fail
    results, threads = line_up(h, registry, plug_run, runs)
    plug.release.set()
    join(threads)
    assert sorted(plug.batches[1]) == sorted(run.run_id for run in runs)
    return registry, plug_run, runs, results


def finish_both(h: Harness, registry: WorkflowRegistry, runs: Sequence[Run]) -> None:
    """Once the leases ran out, another executor runs each from its first node, once."""
    h.clock.advance(PAST_LEASE * 2)
    for run in runs:
        finished = h.executor(registry, "finisher").execute(TENANT, run.run_id)
        assert finished.status is RunStatus.COMPLETED
        assert h.state(run.run_id) == {"seen": ["first", "second"]}
        assert [c.seq for c in h.checkpoints(run.run_id)] == [0, 1, 2]


def test_a_crash_before_the_batch_commits_loses_only_unacknowledged_steps(h: Harness) -> None:
    registry, plug_run, runs, results = fail_batch_of_two(h, Crash("killed before COMMIT"))
    # Acknowledged: the plug's step, committed before the crash, is durable.
    assert h.run(plug_run.run_id).status is RunStatus.COMPLETED
    assert [c.seq for c in h.checkpoints(plug_run.run_id)] == [0, 1]
    # Lost: the crashed batch's steps, and neither caller was told otherwise: the leader
    # died with the crash, its follower learned the outcome is unknown.
    outcomes = [results[run.run_id] for run in runs]
    assert sum(isinstance(o, Crash) for o in outcomes) == 1
    follower = next(o for o in outcomes if not isinstance(o, Crash))
    assert isinstance(follower, Run)
    assert follower.storage_faults == 1  # it handed its run back: no step of it claimed done
    for run in runs:
        assert [c.seq for c in h.checkpoints(run.run_id)] == [0]
        assert h.run(run.run_id).steps == 0
    finish_both(h, registry, runs)


def test_storage_reports_an_unknown_outcome_to_every_step_of_a_failed_batch(h: Harness) -> None:
    """A batch that fails as a whole (the connection dropped at commit) fails every step
    in it with StorageUnavailable: each executor hands its run back and nothing is lost."""
    registry, _, runs, _ = fail_batch_of_two(h, StorageUnavailable("the connection dropped"))
    for run in runs:
        stored = h.run(run.run_id)
        assert stored.storage_faults == 1
        assert "run.storage_fault" in h.event_types(run.run_id)
        assert [c.seq for c in h.checkpoints(run.run_id)] == [0]
    finish_both(h, registry, runs)


@pytest.mark.parametrize("backend_name", [pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_session_that_lost_its_prepared_step_statements_prepares_them_again(
    backend: TestDatabase,
) -> None:
    """A lone step runs statements its connection prepared once; other code that discards
    them (DISCARD ALL, DEALLOCATE ALL) costs the next step a second attempt, not a fault."""
    with open_harness(backend, pg_pool_min_size=1, pg_pool_max_size=1) as h:
        wf = two_nodes()
        registry = WorkflowRegistry(wf)
        first, second = start_runs(h, wf, 2)
        assert h.executor(registry, "w").execute(TENANT, first.run_id).status is (
            RunStatus.COMPLETED
        )
        with h.app.storage._pool.connection() as conn:  # type: ignore[attr-defined]
            conn.execute("DEALLOCATE ALL")
        finished = h.executor(registry, "w").execute(TENANT, second.run_id)
        assert finished.status is RunStatus.COMPLETED
        assert finished.storage_faults == 0
        assert h.state(second.run_id) == {"seen": ["first", "second"]}
        assert [c.seq for c in h.checkpoints(second.run_id)] == [0, 1, 2]
