"""The executor: claims a run, runs its nodes, and writes the checkpoint protocol.

Every durable write goes through :meth:`Executor.commit`, one transaction that first
re-writes the run row *only if* it is still at the version and lease this executor
holds. If another worker took the run over, the write matches no row, nothing commits
and the executor stops (:class:`LeaseLost`). The same statement returns whether someone
asked to cancel the run, so cancellation is checked before every node and effect at no
extra cost.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import random
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tether import canonical
from tether.clock import Clock
from tether.errors import (
    ActionNotApproved,
    LeaseLost,
    NotFound,
    RunCancelled,
    WorkflowChanged,
)
from tether.ids import IdSource
from tether.runs import delta
from tether.runs.context import RunContext
from tether.runs.models import (
    END,
    Checkpoint,
    InterruptReason,
    JournalEntry,
    JournalKind,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.runs.policy_gate import PolicyGate
from tether.runs.signals import Blocked, Suspend
from tether.runs.workflow import Node, Workflow, WorkflowRegistry
from tether.storage.base import StepWrite, Storage, Transaction

if TYPE_CHECKING:
    from tether.procedures import ProcedureGate, ProcedureSet

log = logging.getLogger("tether.runs")

EventSpec = tuple[str, dict[str, Any], float | None]
FaultHook = Callable[[str, str], None]
"""``hook(point, key)`` called at each persistence boundary; tests raise from it to crash."""

FULL_SNAPSHOT_FACTOR = 2
"""A full snapshot is taken when the deltas since the last one outgrow it this many times."""


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def load_state_dict(txn: Transaction, run: Run) -> tuple[dict[str, Any], int]:
    """Rebuild a run's state from its last full snapshot and the deltas after it."""
    checkpoints = txn.list_checkpoints(run.tenant_id, run.run_id, from_seq=run.full_seq)
    state: dict[str, Any] = {}
    version = run.state_version
    for checkpoint in checkpoints:
        payload = canonical.loads(checkpoint.payload)
        state = payload if checkpoint.kind == "full" else delta.apply(state, payload)
        version = checkpoint.state_version
    return state, version


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
    ) -> None:
        self.storage = storage
        self.registry = registry
        self.clock = clock
        self.ids = ids
        self.owner = owner or default_owner()
        self.lease = timedelta(seconds=lease_s)
        self.faults = faults
        self.rng = rng or random.Random()
        self.waits: dict[str, Wait] = {}
        self._buffered: list[JournalEntry] = []
        self._resolutions: list[Wait] = []
        self._state: dict[str, Any] = {}
        self._live: BaseModel | None = None
        self._first_journal: dict[int, JournalEntry] = {}
        self.procedures = procedures
        self.policies: ProcedureSet | None = None
        """The procedures in force for the claimed run's tenant, read with the claim."""
        self.run: Run

    # -- entry points --------------------------------------------------------------------

    def execute(self, tenant_id: str, run_id: str) -> Run:
        """Claim the run if it is runnable and run it until it waits, ends or is taken."""
        now = self.clock.now()
        with self.storage.transaction(tenant_id) as txn:
            run = txn.claim_run(
                tenant_id,
                run_id,
                owner=self.owner,
                lease_expires_at=now + self.lease,
                now=now,
                workflow_keys=self.registry.keys,
            )
            if run is None:
                current = txn.get_run(tenant_id, run_id)
            else:
                self._start_txn(txn, run)
        if run is None:
            if current is None:
                raise NotFound(f"run {run_id} does not exist in tenant {tenant_id!r}")
            self.registry.get(current.workflow, current.workflow_version)
            return current
        return self._drive(self.registry.get(run.workflow, run.workflow_version))

    def execute_next(self) -> Run | None:
        """Claim the oldest runnable run of any tenant whose workflow is registered here."""
        now = self.clock.now()
        with self.storage.system_transaction() as txn:
            found = txn.find_runnable(now=now, workflow_keys=self.registry.keys, limit=1)
            if not found:
                return None
            tenant_id, run_id = found[0]
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
            self._start_txn(txn, run)
        return self._drive(self.registry.get(run.workflow, run.workflow_version))

    def _start_txn(self, txn: Transaction, run: Run) -> None:
        self.run = run
        self._buffered = []
        self._resolutions = []
        self.waits = {
            w.wait_id: w for w in txn.list_waits(run.tenant_id, run_id=run.run_id, limit=10_000)
        }
        self._state, self._state_version = load_state_dict(txn, run)
        self._live = None
        self.policies = (
            self.procedures.in_force_txn(txn, run.tenant_id) if self.procedures else None
        )
        visit = run.visits.get(run.current_node, 0) + 1
        self._first_journal = {
            entry.position: entry
            for entry in txn.list_journal_visit(run.tenant_id, run.run_id, run.current_node, visit)
        }
        txn.insert_events(
            [
                self._event(
                    run.event_seq, "run.claimed", {"owner": self.owner}, None, run.current_node
                )
            ]
        )

    def _drive(self, workflow: Workflow[Any]) -> Run:
        try:
            try:
                self._sync_procedures()
                self._loop(workflow)
            except RunCancelled:
                self._finish(RunStatus.CANCELLED, "run.cancelled", {}, error=None)
        except LeaseLost:
            log.warning("run %s: lease lost to another worker; stopped", self.run.run_id)
        return self.run

    def _sync_procedures(self) -> None:
        """Publish the gate's directory for this tenant if it changed (one extra commit
        only then), or record why a malformed one was not published."""
        if self.procedures is None or self.procedures.directory is None:
            return
        published, problem = self.procedures.sync(self.run.tenant_id, self.policies)
        if published is not None:
            self.policies = published
            self.commit(events=[("procedures.published", {"version": published.version}, None)])
        if problem is not None:
            in_force = self.policies.version if self.policies else None
            self.commit(
                events=[("procedures.invalid", {"error": problem, "in_force": in_force}, None)]
            )

    # -- the node loop -------------------------------------------------------------------

    def _loop(self, workflow: Workflow[Any]) -> None:
        while True:
            run = self.run
            if run.cancel_requested:
                raise RunCancelled()
            now = self.clock.now()
            if run.deadline is not None and now >= run.deadline:
                self._finish(
                    RunStatus.FAILED, "run.failed", {"reason": "deadline"}, error="deadline passed"
                )
                return
            if run.steps >= run.max_steps:
                self._finish(
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
            journal, self._first_journal = self._first_journal, {}
            # The state the last checkpoint stored, as a model. Between nodes it is the
            # live object the previous node changed (its dump is what was stored); after
            # a claim it is rebuilt from the stored dict.
            if self._live is None:
                self._live = workflow.load_state(copy.deepcopy(self._state), self._state_version)
            state = self._live
            ctx = RunContext(self, node.name, visit, journal)
            started = time.perf_counter()
            try:
                next_node = self._call(node, ctx, state)
                if ctx.changed is not None:
                    raise ctx.changed
            except Suspend as suspend:
                self._live = None
                self._suspend(suspend)
                return
            except Blocked as blocked:
                self._live = None
                self._blocked(blocked)
                return
            except (ActionNotApproved, WorkflowChanged) as exc:
                self._live = None
                self._escalate(ctx, exc)
                return
            except Exception as exc:
                self._live = None
                self._node_failed(node, exc)
                return
            if next_node != END and next_node not in workflow.nodes:
                self._finish(
                    RunStatus.FAILED,
                    "run.failed",
                    {"node": node.name},
                    error=f"node {node.name!r} returned {next_node!r}, which is not a node",
                )
                return
            self._checkpoint(
                workflow, node, visit, next_node, state, (time.perf_counter() - started) * 1000
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
        workflow: Workflow[Any],
        node: Node,
        visit: int,
        next_node: str,
        state: BaseModel,
        duration_ms: float,
    ) -> None:
        run = self.run
        new_state = state.model_dump(mode="json")
        ops = (
            delta.diff(self._state, new_state)
            if self._state_version == workflow.state_version
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
        )
        if finished:
            changes.update(lease_owner=None, lease_expires_at=None)
        events: list[EventSpec] = [
            ("node.completed", {"next": next_node, "visit": visit}, duration_ms)
        ]
        if finished:
            events.append(("run.completed", {"steps": run.steps + 1}, None))
        checkpoint = Checkpoint(
            tenant_id=run.tenant_id,
            run_id=run.run_id,
            seq=seq,
            node=node.name,
            next_node=next_node,
            kind=kind,
            payload=payload,
            state_version=workflow.state_version,
            created_at=self.clock.now(),
        )
        self.crash_point("before_checkpoint", node.name)
        self.commit(events=events, checkpoint=checkpoint, changes=changes, node=node.name)
        self._state, self._state_version = new_state, workflow.state_version
        self.crash_point("after_checkpoint", node.name)

    # -- leaving the loop ----------------------------------------------------------------

    def _suspend(self, suspend: Suspend) -> None:
        wait = suspend.wait
        self.commit(
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
            },
            node=wait.node,
        )
        self.waits[wait.wait_id] = wait

    def _blocked(self, blocked: Blocked) -> None:
        """A policy forbade an effect and says the run fails: no retry, no review."""
        self.commit(
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

    def _escalate(self, ctx: RunContext, exc: Exception) -> None:
        """Refusals and changed code need a person: park the run in ``human_review``."""
        wait = self.new_wait(
            ctx,
            0,
            JournalKind.INTERRUPT,
            InterruptReason.HUMAN_REVIEW,
            str(exc),
            {"error": getattr(exc, "code", "error")},
        )
        event = "effect.refused" if isinstance(exc, ActionNotApproved) else "workflow.changed"
        self._buffered = []
        self._suspend(Suspend(wait, ctx._entry(0, "review", JournalKind.INTERRUPT), event))

    def _node_failed(self, node: Node, exc: Exception) -> None:
        run = self.run
        attempt = run.attempt + 1
        error = f"{type(exc).__name__}: {exc}"[:2000]
        self._buffered = []
        if attempt < node.retry.max_attempts:
            delay = node.retry.delay_s(attempt, self.rng)
            resume_at = self.clock.now() + timedelta(seconds=delay)
            self.commit(
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
            RunStatus.FAILED, "run.failed", {"node": node.name, "attempts": attempt}, error=error
        )

    def _finish(
        self, status: RunStatus, event: str, data: dict[str, Any], *, error: str | None
    ) -> None:
        self.commit(
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

    # -- the one write path --------------------------------------------------------------

    def buffer_resolution(self, wait: Wait) -> None:
        """Close a wait (a timed one that has come due) with the next write."""
        self._resolutions.append(wait)
        self.waits[wait.wait_id] = wait

    def buffer_step(self, entry: JournalEntry) -> None:
        """Steps become durable with the next write (nothing durable can depend on them
        before that), so they cost no commit of their own."""
        self._buffered.append(entry)

    def crash_point(self, point: str, key: str) -> None:
        if self.faults is not None:
            self.faults(point, key)

    def new_wait(
        self,
        ctx: RunContext | PolicyGate,
        position: int,
        kind: JournalKind,
        reason: InterruptReason,
        message: str,
        request: dict[str, Any],
        *,
        expires_in: timedelta | None = None,
        resume_at: datetime | None = None,
        action_digest: str | None = None,
        approver_role: str | None = None,
    ) -> Wait:
        now = self.clock.now()
        return Wait(
            tenant_id=self.run.tenant_id,
            wait_id=str(self.ids.new_id()),
            run_id=self.run.run_id,
            node=ctx.node,
            visit=ctx.visit,
            position=position,
            kind=kind,
            reason=reason,
            status=WaitStatus.OPEN,
            message=message,
            request=request,
            action_digest=action_digest,
            approver_role=approver_role,
            requested_by=self.run.created_by,
            resume_at=resume_at,
            expires_at=now + expires_in if expires_in else None,
            created_at=now,
            resolved_at=None,
            resolved_by=None,
            resolution=None,
        )

    def _event(
        self, seq: int, type_: str, data: dict[str, Any], duration: float | None, node: str | None
    ) -> RunEvent:
        return RunEvent(
            tenant_id=self.run.tenant_id,
            run_id=self.run.run_id,
            seq=seq,
            at=self.clock.now(),
            type=type_,
            node=node,
            duration_ms=duration,
            data=data,
        )

    def commit(
        self,
        *,
        journal: Sequence[JournalEntry] = (),
        events: Iterable[EventSpec] = (),
        checkpoint: Checkpoint | None = None,
        waits: Sequence[Wait] = (),
        changes: dict[str, Any] | None = None,
        node: str | None = None,
        cancellable: bool = True,
    ) -> None:
        """Write one transaction guarded by this executor's version and lease.

        Raises:
            LeaseLost: another worker owns the run now; nothing was written.
            RunCancelled: cancellation was requested (and ``cancellable``); nothing written.
        """
        run = self.run
        now = self.clock.now()
        specs = list(events)
        rows = [
            self._event(run.event_seq + i, type_, data, duration, node or run.current_node)
            for i, (type_, data, duration) in enumerate(specs, start=1)
        ]
        update: dict[str, Any] = {
            "lease_expires_at": now + self.lease,
            "event_seq": run.event_seq + len(rows),
            "updated_at": now,
            "updated_by": self.owner,
        }
        update.update(changes or {})
        if update.get("status") not in (None, RunStatus.SCHEDULED):
            update.setdefault("resume_at", None)
        new_run = run.model_copy(update=update)
        write = StepWrite(
            run=new_run,
            expected_version=run.version,
            expected_owner=self.owner,
            cancellable=cancellable,
            journal=[*self._buffered, *journal],
            checkpoint=checkpoint,
            waits=waits,
            resolved=self._resolutions,
            events=rows,
        )
        try:
            version, cancel = self.storage.write_step(write)
        except RunCancelled:
            self.run = run.model_copy(update={"cancel_requested": True})
            raise
        self._buffered = []
        self._resolutions = []
        self.run = new_run.model_copy(update={"version": version, "cancel_requested": cancel})
