"""Moving a run from outside a claim: answers, decisions, cancellations, operator actions.

A worker writes through its :class:`~tether.runs.claim.Claim`. Everyone else who moves a
run (``app.runs`` answering a wait or settling children, ``app.runbook`` acting for an
operator) writes through a :class:`RunWriter`, inside the caller's transaction: the run
row only if it is still at the version (and lease owner) that was read, and one event per
change, numbered after the run's last.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from tether import canonical
from tether.clock import Clock
from tether.errors import ConcurrentChange, Conflict, NotFound
from tether.ids import parse_id
from tether.principals import Principal
from tether.runs.models import (
    END,
    FINISHED,
    Checkpoint,
    JournalKind,
    JournalStatus,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.storage.stores import RunStore

P = ParamSpec("P")
R = TypeVar("R")
RACE_ATTEMPTS = 5
"""How often an operator's action is tried when what it read changed before its write."""


def retried_on_race(action: Callable[P, R]) -> Callable[P, R]:
    """``action`` (one transaction of its own) done again, from a fresh read, when it
    raises :class:`~tether.errors.ConcurrentChange`: a worker's step or claim between
    its read and its write. Nothing was written by the attempt that lost the race."""

    @functools.wraps(action)
    def again(*args: P.args, **kwargs: P.kwargs) -> R:
        for _ in range(RACE_ATTEMPTS - 1):
            try:
                return action(*args, **kwargs)
            except ConcurrentChange:
                continue
        return action(*args, **kwargs)

    return again


class RunWriter:
    """Guarded changes of a run's row, with their events."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def get_txn(self, txn: RunStore, tenant_id: str, run_id: str) -> Run:
        parse_id(run_id, what="run id")
        run = txn.get_run(tenant_id, run_id)
        if run is None:
            raise NotFound(f"run {run_id} does not exist in tenant {tenant_id!r}")
        return run

    def wait_txn(self, txn: RunStore, tenant_id: str, wait_id: str) -> Wait:
        parse_id(wait_id, what="wait id")
        wait = txn.get_wait(tenant_id, wait_id)
        if wait is None:
            raise NotFound(f"no interrupt or approval {wait_id} in tenant {tenant_id!r}")
        return wait

    def transition_txn(
        self,
        txn: RunStore,
        principal: Principal,
        run: Run,
        status: RunStatus,
        event: str,
        data: dict[str, Any],
        **changes: Any,
    ) -> Run:
        """Write ``run`` in ``status`` (no wait, no resume time unless ``changes`` say)
        and one ``event`` whose data names who did it.

        Raises:
            Conflict: the run changed since it was read; nothing was written.
        """
        now = self._clock.now()
        updated = run.model_copy(
            update={
                "status": status,
                "wait_id": None,
                "resume_at": None,
                "event_seq": run.event_seq + 1,
                "updated_at": now,
                "updated_by": principal.principal_id,
                **changes,
            }
        )
        saved = txn.save_run(updated, expected_version=run.version, expected_owner=run.lease_owner)
        if saved is None:
            raise ConcurrentChange(f"run {run.run_id} changed concurrently; try again")
        txn.insert_events(
            [self.event(updated, updated.event_seq, event, {**data, "by": principal.principal_id})]
        )
        return updated.model_copy(update={"version": saved[0]})

    def resolve_txn(
        self,
        txn: RunStore,
        principal: Principal,
        wait: Wait,
        status: WaitStatus,
        resolution: dict[str, Any],
        journal_result: str | None,
        data: dict[str, Any] | None = None,
    ) -> Run:
        """Close an open wait (and its journal entry, with ``journal_result``) and queue
        its run again, so the node runs and the wait returns the answer. The event
        (``wait.<status>``) carries ``data`` besides the wait's id."""
        now = self._clock.now()
        if not txn.resolve_wait(
            principal.tenant_id,
            wait.wait_id,
            status=status.value,
            resolved_at=now,
            resolved_by=principal.principal_id,
            resolution=resolution,
        ):
            raise Conflict(f"{wait.wait_id} was decided concurrently")
        if wait.position and journal_result is not None:
            for entry in txn.list_journal_visit(wait.tenant_id, wait.run_id, wait.node, wait.visit):
                if entry.position == wait.position and entry.kind in (
                    JournalKind.INTERRUPT,
                    JournalKind.APPROVAL,
                ):
                    txn.upsert_journal_entries(
                        [
                            entry.model_copy(
                                update={
                                    "status": JournalStatus.DONE,
                                    "result": journal_result,
                                    "finished_at": now,
                                }
                            )
                        ]
                    )
        run = self.get_txn(txn, wait.tenant_id, wait.run_id)
        if run.status in FINISHED:
            raise Conflict(f"run {run.run_id} is already {run.status.value}")
        return self.transition_txn(
            txn,
            principal,
            run,
            RunStatus.QUEUED,
            f"wait.{status.value}",
            {"wait_id": wait.wait_id, **(data or {})},
        )

    def close_waits_txn(self, txn: RunStore, principal: Principal, run: Run, reason: str) -> int:
        """Cancel the run's open waits (nobody may answer them any more); how many."""
        closed = 0
        for wait in txn.list_waits(run.tenant_id, run_id=run.run_id, status="open"):
            closed += txn.resolve_wait(
                run.tenant_id,
                wait.wait_id,
                status=WaitStatus.CANCELLED.value,
                resolved_at=self._clock.now(),
                resolved_by=principal.principal_id,
                resolution={"reason": reason},
            )
        return closed

    def cancel_txn(self, txn: RunStore, principal: Principal, run: Run, reason: str) -> Run:
        """Cancel ``run`` (not finished) and, first, its unfinished child runs.

        ``reason`` is what the ``run.cancelled`` event keeps: the digest of an operator's
        note, or Tether's own words for a cancellation nobody typed. A running run is
        asked to stop at its next node or effect (its worker writes the event)."""
        for child in txn.list_children(run.tenant_id, run.run_id):
            if child.status not in FINISHED:
                self.cancel_txn(txn, principal, child, reason or "parent cancelled")
        if run.status is RunStatus.RUNNING and run.lease_owner is not None:
            txn.request_cancel(run.tenant_id, run.run_id, reason=reason)
            return run.model_copy(update={"cancel_requested": True, "cancel_reason": reason})
        self.close_waits_txn(txn, principal, run, reason)
        return self.transition_txn(
            txn, principal, run, RunStatus.CANCELLED, "run.cancelled", {"reason": reason}
        )

    def control_txn(self, txn: RunStore, run: Run, version: int) -> None:
        """Drop any stop request of ``run`` (at ``version``) and pin its workflow version."""
        if not txn.set_run_control(
            run.tenant_id,
            run.run_id,
            workflow_version=run.workflow_version,
            cancel_requested=False,
            cancel_reason=None,
            expected_version=version,
        ):
            raise ConcurrentChange(f"run {run.run_id} changed concurrently; try again")

    def checkpoint_txn(
        self,
        txn: RunStore,
        principal: Principal,
        run: Run,
        next_node: str,
        state: dict[str, Any],
        state_version: int,
        event: str,
        data: dict[str, Any],
    ) -> Run:
        """Record the current visit as done by hand: a full checkpoint of ``state`` naming
        the node, the visit counted, the run queued at ``next_node`` (or completed), its
        open waits cancelled and any stop request dropped."""
        node, seq = run.current_node, run.checkpoint_seq + 1
        payload = canonical.dumps(state, trusted=True)
        txn.insert_checkpoint(
            Checkpoint(
                tenant_id=run.tenant_id,
                run_id=run.run_id,
                seq=seq,
                node=node,
                next_node=next_node,
                kind="full",
                payload=payload,
                state_version=state_version,
                created_at=self._clock.now(),
            )
        )
        self.close_waits_txn(txn, principal, run, str(data["reason"]))
        updated = self.transition_txn(
            txn,
            principal,
            run,
            RunStatus.COMPLETED if next_node == END else RunStatus.QUEUED,
            event,
            data,
            current_node=next_node,
            checkpoint_seq=seq,
            full_seq=seq,
            full_bytes=len(payload),
            delta_bytes=0,
            state_version=state_version,
            steps=run.steps + 1,
            visits={**run.visits, node: visit_of(run)},
            attempt=0,
            error=None,
            storage_faults=0,
        )
        if run.cancel_requested:
            self.control_txn(txn, updated, updated.version)
        return updated

    def event(self, run: Run, seq: int, type_: str, data: dict[str, Any]) -> RunEvent:
        return RunEvent(
            tenant_id=run.tenant_id,
            run_id=run.run_id,
            seq=seq,
            at=self._clock.now(),
            type=type_,
            node=run.current_node,
            duration_ms=None,
            data=data,
        )


def visit_of(run: Run) -> int:
    """The visit of the run's current node that runs next (or was under way)."""
    return run.visits.get(run.current_node, 0) + 1
