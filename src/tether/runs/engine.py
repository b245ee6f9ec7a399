"""The executor: claims runs and drives each claim through its nodes.

An :class:`Executor` is a long-lived worker identity (its storage, workflows, clock, ids,
owner and lease). Each claim it wins becomes an :class:`~tether.runs.claim.Claim`,
which holds that run's state and writes the checkpoint protocol; the executor runs the
nodes, turns what they return or raise into the claim's writes, and forgets the claim
when the run waits, ends or is taken over.
"""

from __future__ import annotations

import asyncio
import copy
import os
import random
import socket
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from tether import canonical
from tether.clock import Clock
from tether.errors import (
    ActionNotApproved,
    LeaseLost,
    NotFound,
    RunCancelled,
    StorageUnavailable,
    WorkflowChanged,
)
from tether.ids import IdSource
from tether.redaction import describe_exception, get_logger
from tether.runs import delta
from tether.runs.claim import Claim, FaultHook, load_state_dict
from tether.runs.context import RunContext
from tether.runs.heartbeat import Heartbeat
from tether.runs.limits import within_limits_txn
from tether.runs.models import (
    END,
    Checkpoint,
    InterruptReason,
    JournalKind,
    Run,
    RunStatus,
)
from tether.runs.policy_gate import PolicyGate
from tether.runs.signals import Blocked, EventSpec, Suspend
from tether.runs.workflow import Node, Workflow, WorkflowRegistry
from tether.storage.base import Storage
from tether.storage.stores import ProcedureStore, RunStore
from tether.validation import check_value

if TYPE_CHECKING:
    from tether.procedures.service import ProcedureGate


class _ClaimStore(RunStore, ProcedureStore, Protocol):
    """A claim leases the run and reads the procedures in force for its tenant."""


log = get_logger("tether.runs")

FULL_SNAPSHOT_FACTOR = 2
"""A full snapshot is taken when the deltas since the last one outgrow it this many times."""

MAX_STORAGE_FAULTS = 5
"""Storage faults in a row that stop one node before its run goes to ``human_review``."""


def default_owner() -> str:
    """``host:pid:tag``, unique per executor: a worker that finds a run it leased itself
    knows no call of that lease is still in flight, which holds only if no other live
    executor shares its name."""
    return f"{socket.gethostname()}:{os.getpid()}:{random.SystemRandom().randrange(16**6):06x}"


class Executor:
    """Runs one run at a time for one worker identity (``owner``)."""

    def __init__(
        self,
        storage: Storage,
        registry: WorkflowRegistry,
        *,
        clock: Clock,
        ids: IdSource,
        owner: str | None = None,
        lease_s: float = 60.0,
        faults: FaultHook | None = None,
        rng: random.Random | None = None,
        procedures: ProcedureGate | None = None,
        max_storage_faults: int = MAX_STORAGE_FAULTS,
    ) -> None:
        self.storage = storage
        self.registry = registry
        self.clock = clock
        self.ids = ids
        self.owner = owner or default_owner()
        self.lease = timedelta(seconds=lease_s)
        self.faults = faults
        self.rng = rng or random.Random()
        self.procedures = procedures
        self.max_storage_faults = max_storage_faults
        self.heartbeat = Heartbeat(storage, self.lease)
        self.storage_faults = 0
        """Storage faults that stopped a claim of this executor (each handed its run back
        or left it to its lease)."""
        self.claims = self.takeovers = self.retries = 0
        """Claims won; of them, takeovers of a lease another worker let run out; node
        failures that scheduled another attempt."""

    # -- entry points --------------------------------------------------------------------

    def execute(self, tenant_id: str, run_id: str) -> Run:
        """Claim the run if it is runnable (and its tenant and workflow are under their
        concurrency limits) and run it until it waits, ends or is taken."""
        now = self.clock.now()
        with self.storage.transaction(tenant_id) as txn:
            current = txn.get_run(tenant_id, run_id)
            claim = None
            if current is not None and within_limits_txn(txn, self.registry, current, now):
                claim = self._claim_txn(txn, tenant_id, run_id, now, current)
        if claim is None:
            if current is None:
                raise NotFound(f"run {run_id} does not exist in tenant {tenant_id!r}")
            self.registry.get(current.workflow, current.workflow_version)
            return current
        return self._drive(claim)

    def execute_next(self) -> Run | None:
        """Claim the runnable run of any tenant whose workflow is registered here that
        comes first (expired leases, then priority, then age), within the limits."""
        now = self.clock.now()
        with self.storage.system_transaction() as txn:
            keys, limits = self.registry.keys, self.registry.limits
            found = txn.find_runnable(now=now, workflow_keys=keys, limit=1, workflow_limits=limits)
            if not found or not within_limits_txn(txn, self.registry, found[0], now):
                return None
            first = found[0]
            claim = self._claim_txn(txn, first.tenant_id, first.run_id, now)
        return None if claim is None else self._drive(claim)

    def _claim_txn(
        self,
        txn: _ClaimStore,
        tenant_id: str,
        run_id: str,
        now: datetime,
        before: Run | None = None,
    ) -> Claim | None:
        """Claim the run (``before``: as this transaction read it) and read what its claim
        holds, or ``None`` if it is not runnable (or its workflow is not registered here)."""
        before = before or txn.get_run(tenant_id, run_id)
        run = txn.claim_run(
            tenant_id,
            run_id,
            owner=self.owner,
            lease_expires_at=now + self.lease,
            now=now,
            workflow_keys=self.registry.keys,
        )
        if run is None:
            return None
        state, state_version = load_state_dict(txn, run)
        policies = self.procedures.in_force_txn(txn, run.tenant_id) if self.procedures else None
        visit = run.visits.get(run.current_node, 0) + 1
        journal = txn.list_journal_visit(run.tenant_id, run.run_id, run.current_node, visit)
        wanted = any(entry.wait_id is not None for entry in journal)  # see Claim: waits
        found = txn.list_waits(run.tenant_id, run_id=run.run_id, limit=10_000) if wanted else []
        waits = {w.wait_id: w for w in found}
        claim = Claim(
            run,
            storage=self.storage,
            clock=self.clock,
            ids=self.ids,
            owner=self.owner,
            lease=self.lease,
            faults=self.faults,
            waits=waits,
            state=state,
            state_version=state_version,
            first_journal={entry.position: entry for entry in journal},
            policies=policies,
            taken_over=before is not None
            and before.status is RunStatus.RUNNING
            and before.lease_owner not in (None, self.owner),
        )
        data = {"owner": self.owner, **({"taken_over": True} if claim.taken_over else {})}
        claimed = claim.event(run.event_seq, "run.claimed", data, None, run.current_node)
        txn.insert_events([claimed])
        return claim

    def _drive(self, claim: Claim) -> Run:
        run = claim.run
        workflow = self.registry.get(run.workflow, run.workflow_version)
        self.claims += 1
        self.takeovers += claim.taken_over
        self.heartbeat.watch(claim)
        try:
            try:
                try:
                    if run.storage_faults >= self.max_storage_faults:
                        self._review_storage_faults(claim)
                        return claim.run
                    self._sync_procedures(claim)
                    self._loop(claim, workflow)
                except RunCancelled:
                    self._finish(claim, *claim.stop_requested(), error=None)
            except LeaseLost:
                log.warning(
                    "run %s: lease lost (%s); stopped",
                    claim.run.run_id,
                    claim.lost or "another worker owns the run",
                )
        except StorageUnavailable as exc:
            self.heartbeat.unwatch()
            self._hand_back(claim, exc)
        finally:
            self.heartbeat.unwatch()
        return claim.run

    # -- storage faults ------------------------------------------------------------------

    def _hand_back(self, claim: Claim, exc: StorageUnavailable) -> None:
        """A storage fault stopped the claim: this is no fault of the node, so the run is
        not failed. Hand it back, runnable after a backoff that grows with the faults in a
        row, its open intents whose call is over marked so; its next claim recovers it from
        the journal (see ``RunContext.effect``). If storage is still down, the lease runs
        out instead and the run is recovered first by whichever worker claims next."""
        self.storage_faults, run = self.storage_faults + 1, claim.run
        log.warning(
            "run %s: storage fault in node %s (%s: %s); handing the run back",
            run.run_id,
            run.current_node,
            exc.code,
            exc.message,
        )
        faults = run.storage_faults
        delay = 0.0 if faults == 0 else min(self.lease.total_seconds(), 0.5 * 2 ** min(faults, 16))
        error = f"storage fault in node {run.current_node!r}: {exc.message}"[:2000]
        pause, deadline = 0.02, time.monotonic() + min(self.lease.total_seconds() / 2, 5.0)
        while True:
            now = self.clock.now()
            try:
                with self.storage.transaction(run.tenant_id) as txn:
                    released = txn.release_after_fault(
                        run.tenant_id,
                        run.run_id,
                        owner=self.owner,
                        epoch=run.lease_epoch,
                        error=error,
                        resume_at=now + timedelta(seconds=delay),
                        now=now,
                    )
                    if released is not None:
                        txn.mark_calls_ended(claim.ended_calls(), at=now)
                        data: dict[str, Any] = {
                            "error": exc.code,
                            "node": run.current_node,
                            "faults": released.storage_faults,
                        }
                        txn.insert_events(
                            [claim.event(released.event_seq, "run.storage_fault", data, None, None)]
                        )
            except StorageUnavailable:
                if time.monotonic() + pause > deadline:
                    return
                time.sleep(pause)
                pause = min(pause * 2, 0.5)
                continue
            if released is not None:
                claim.run = released
            return

    def _review_storage_faults(self, claim: Claim) -> None:
        """The same node was stopped by storage faults too many times in a row: a fault
        that does not go away needs a person, not an endless loop."""
        run = claim.run
        visit = run.visits.get(run.current_node, 0) + 1
        wait = claim.new_wait(
            run.current_node,
            visit,
            0,
            JournalKind.INTERRUPT,
            InterruptReason.HUMAN_REVIEW,
            f"storage failed {run.storage_faults} times in a row while node "
            f"{run.current_node!r} ran (last: {run.error}). Fix the database, then answer "
            "anything to run the node again",
            {"error": StorageUnavailable.code, "faults": run.storage_faults},
        )
        review = claim.journal_entry(run.current_node, visit, 0, "review", JournalKind.INTERRUPT)
        self._suspend(claim, Suspend(wait, review, "run.storage_faults"))

    def _sync_procedures(self, claim: Claim) -> None:
        """Publish the gate's directory for this tenant if it changed (one extra commit
        only then), or record why a malformed one was not published."""
        if self.procedures is None or self.procedures.directory is None:
            return
        published, problem = self.procedures.sync(claim.run.tenant_id, claim.policies)
        if published is not None:
            claim.policies = published
            claim.commit(events=[("procedures.published", {"version": published.version}, None)])
        if problem is not None:
            in_force = claim.policies.version if claim.policies else None
            claim.commit(
                events=[("procedures.invalid", {"error": problem, "in_force": in_force}, None)]
            )

    # -- the node loop -------------------------------------------------------------------

    def _loop(self, claim: Claim, workflow: Workflow[Any]) -> None:
        gate = PolicyGate(claim)
        while True:
            run = claim.run
            if run.cancel_requested:
                raise RunCancelled()
            now = self.clock.now()
            if run.deadline is not None and now >= run.deadline:
                self._finish(
                    claim,
                    RunStatus.FAILED,
                    "run.failed",
                    {"reason": "deadline"},
                    error="deadline passed",
                )
                return
            if run.steps >= run.max_steps:
                self._finish(
                    claim,
                    RunStatus.FAILED,
                    "run.failed",
                    {"reason": "max_steps"},
                    error=f"max_steps ({run.max_steps}) reached",
                )
                return
            node = workflow.run_node(run.current_node)
            visit = run.visits.get(node.name, 0) + 1
            # Only the visit a claim resumes can have journal entries: later visits are
            # this executor's own, written under its lease.
            journal, claim.first_journal = claim.first_journal, {}
            # The state the last checkpoint stored, as a model. Between nodes it is the
            # live object the previous node changed (its dump is what was stored); after
            # a claim it is rebuilt from the stored dict.
            state = claim.live
            if state is None:
                state = claim.live = workflow.load_state(
                    copy.deepcopy(claim.state), claim.state_version
                )
            ctx = RunContext(claim, gate, node.name, visit, journal)
            started = time.perf_counter()
            try:
                next_node = self._call(node, ctx, state)
                if ctx.changed is not None:
                    raise ctx.changed
                check_value("state", state)
            except Suspend as suspend:
                claim.live = None
                self._suspend(claim, suspend)
                return
            except Blocked as blocked:
                claim.live = None
                self._blocked(claim, blocked)
                return
            except (ActionNotApproved, WorkflowChanged) as exc:
                claim.live = None
                if claim.fault is not None:
                    raise claim.fault from exc
                self._escalate(claim, ctx, exc)
                return
            except Exception as exc:
                claim.live = None
                claim.discard_steps()
                if isinstance(exc, StorageUnavailable):
                    raise
                if claim.fault is not None:
                    raise claim.fault from exc
                self._node_failed(claim, node, exc)
                return
            if claim.fault is not None:
                claim.live = None
                claim.discard_steps()
                raise claim.fault
            if next_node != END and next_node not in workflow.nodes:
                self._finish(
                    claim,
                    RunStatus.FAILED,
                    "run.failed",
                    {"node": node.name},
                    error=f"node {node.name!r} returned {next_node!r}, which is not a node",
                )
                return
            self._checkpoint(
                claim,
                workflow,
                node,
                visit,
                next_node,
                state,
                (time.perf_counter() - started) * 1000,
            )
            if next_node == END:
                return

    def _call(self, node: Node, ctx: RunContext, state: BaseModel) -> str:
        if node.is_async:
            result = asyncio.run(node.fn(ctx, state))
        else:
            result = node.fn(ctx, state)
        if not isinstance(result, str):
            raise TypeError(
                f"node {node.name!r} must return the next node's name or END, got {result!r}"
            )
        return result

    def _checkpoint(
        self,
        claim: Claim,
        workflow: Workflow[Any],
        node: Node,
        visit: int,
        next_node: str,
        state: BaseModel,
        duration_ms: float,
    ) -> None:
        run = claim.run
        new_state = state.model_dump(mode="json")
        ops = (
            delta.diff(claim.state, new_state)
            if claim.state_version == workflow.state_version
            else None
        )
        seq = run.checkpoint_seq + 1
        delta_text = canonical.dumps(ops, trusted=True) if ops is not None else None
        threshold = FULL_SNAPSHOT_FACTOR * max(run.full_bytes, 1024)
        if delta_text is None or run.delta_bytes + len(delta_text) > threshold:
            kind, payload = "full", canonical.dumps(new_state, trusted=True)
            changes: dict[str, Any] = {
                "full_seq": seq,
                "full_bytes": len(payload),
                "delta_bytes": 0,
            }
        else:
            kind, payload = "delta", delta_text
            changes = {"delta_bytes": run.delta_bytes + len(payload)}
        finished = next_node == END
        changes.update(
            current_node=next_node,
            checkpoint_seq=seq,
            state_version=workflow.state_version,
            steps=run.steps + 1,
            attempt=0,
            wait_id=None,
            error=None,
            visits={**run.visits, node.name: visit},
            status=RunStatus.COMPLETED if finished else RunStatus.RUNNING,
            storage_faults=0,
        )
        if finished:
            changes.update(lease_owner=None, lease_expires_at=None)
        events: list[EventSpec] = [
            ("node.completed", {"next": next_node, "visit": visit}, duration_ms)
        ]
        if finished:
            events.append(("run.completed", {"steps": run.steps + 1}, None))
        now = self.clock.now()  # the checkpoint's, its event's and the run's update time
        checkpoint = Checkpoint(
            tenant_id=run.tenant_id,
            run_id=run.run_id,
            seq=seq,
            node=node.name,
            next_node=next_node,
            kind=kind,
            payload=payload,
            state_version=workflow.state_version,
            created_at=now,
        )
        claim.crash_point("before_checkpoint", node.name)
        claim.commit(events=events, checkpoint=checkpoint, changes=changes, node=node.name, now=now)
        claim.state, claim.state_version = new_state, workflow.state_version
        claim.crash_point("after_checkpoint", node.name)

    # -- leaving the loop ----------------------------------------------------------------

    def _suspend(self, claim: Claim, suspend: Suspend) -> None:
        wait = suspend.wait
        claim.commit(
            journal=[suspend.entry] if suspend.wait.position else [],
            waits=[wait],
            events=[
                *suspend.before,
                (
                    suspend.event,
                    {"wait_id": wait.wait_id, "reason": wait.reason.value, "message": wait.message},
                    None,
                ),
            ],
            changes={
                "status": wait.reason.status,
                "wait_id": wait.wait_id,
                "resume_at": wait.resume_at,
                "lease_owner": None,
                "lease_expires_at": None,
                "storage_faults": 0,
            },
            node=wait.node,
            children=suspend.children,
        )
        claim.waits[wait.wait_id] = wait

    def _blocked(self, claim: Claim, blocked: Blocked) -> None:
        """A policy forbade an effect and says the run fails: no retry, no review."""
        claim.commit(
            journal=[blocked.entry],
            events=[*blocked.events, ("run.failed", {"reason": "policy"}, None)],
            changes={
                "status": RunStatus.FAILED,
                "error": blocked.message,
                "lease_owner": None,
                "lease_expires_at": None,
                "wait_id": None,
            },
            node=blocked.entry.node,
            cancellable=False,
        )

    def _escalate(self, claim: Claim, ctx: RunContext, exc: Exception) -> None:
        """Refusals and changed code need a person: park the run in ``human_review``."""
        wait = claim.new_wait(
            ctx.node,
            ctx.visit,
            0,
            JournalKind.INTERRUPT,
            InterruptReason.HUMAN_REVIEW,
            str(exc),
            {"error": getattr(exc, "code", "error")},
        )
        event = "effect.refused" if isinstance(exc, ActionNotApproved) else "workflow.changed"
        claim.discard_steps()
        review = claim.journal_entry(ctx.node, ctx.visit, 0, "review", JournalKind.INTERRUPT)
        self._suspend(claim, Suspend(wait, review, event))

    def _node_failed(self, claim: Claim, node: Node, exc: Exception) -> None:
        attempt = claim.run.attempt + 1
        error = describe_exception(exc)
        claim.discard_steps()
        if attempt < node.retry.max_attempts:
            delay = node.retry.delay_s(attempt, self.rng)
            resume_at = self.clock.now() + timedelta(seconds=delay)
            self.retries += 1
            claim.commit(
                events=[
                    ("node.failed", {"error": error, "attempt": attempt}, None),
                    (
                        "node.retry_scheduled",
                        {"resume_at": resume_at, "attempt": attempt + 1},
                        None,
                    ),
                ],
                changes={
                    "status": RunStatus.SCHEDULED,
                    "attempt": attempt,
                    "resume_at": resume_at,
                    "error": error,
                    "lease_owner": None,
                    "lease_expires_at": None,
                },
                node=node.name,
                cancellable=True,
            )
            return
        self._finish(
            claim,
            RunStatus.FAILED,
            "run.failed",
            {"node": node.name, "attempts": attempt},
            error=error,
        )

    def _finish(
        self,
        claim: Claim,
        status: RunStatus,
        event: str,
        data: dict[str, Any],
        *,
        error: str | None,
    ) -> None:
        claim.commit(
            events=[(event, data, None)],
            changes={
                "status": status,
                "error": error,
                "lease_owner": None,
                "lease_expires_at": None,
                "wait_id": None,
            },
            cancellable=False,
        )
