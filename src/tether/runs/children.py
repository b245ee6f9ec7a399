"""Child runs: a node starts runs of other workflows and waits for them durably.

``ctx.children.start(workflow, states, wait="all" | "any" | N, parallel=False)`` parks the
parent (``waiting_for_children``, no worker held) in the same commit that creates the
children, queued, in the parent's tenant and acting for the principal that started the
parent. Each child runs like any run. When enough have finished (all, any one, or N),
the parent's wait is settled (``Runs.settle_children``, called by the worker that finished
the child and, after a crash, by any idle worker), the children not finished yet are
cancelled, and the results land in the parent's journal: the node runs again and
``ctx.children.start`` returns them (one per child, in order: ``run_id``, ``status``, ``state``
when completed, ``error``). Unless ``parallel``, the children run one at a time.
Cancelling the parent cancels its children.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from tether import canonical
from tether.errors import Conflict, InvalidInput, RunCancelled
from tether.runs.claim import Claim, load_state_dict
from tether.runs.models import (
    Checkpoint,
    InterruptReason,
    JournalEntry,
    JournalKind,
    JournalStatus,
    Run,
    RunEvent,
    RunStatus,
)
from tether.runs.signals import Suspend
from tether.runs.workflow import Workflow
from tether.storage.stores import RunStore

ChildWait = Literal["all", "any"] | int
"""How many children must finish before the parent resumes."""

MAX_CHILDREN = 1000


def new_run(
    workflow: Workflow[Any],
    state: BaseModel | Mapping[str, Any],
    *,
    tenant_id: str,
    run_id: str,
    created_by: str,
    now: datetime,
    max_steps: int | None = None,
    deadline: datetime | None = None,
    priority: int = 0,
    parent: tuple[str, str, bool] | None = None,
) -> tuple[Run, Checkpoint]:
    """A queued run of ``workflow`` with its first (full) checkpoint; ``parent`` is the
    parent's run id, its wait on the children, and whether the child runs alone."""
    initial = workflow.validate_state(state).model_dump(mode="json")
    if max_steps is not None and max_steps < 1:
        raise InvalidInput("max_steps must be at least 1")
    if workflow.start is None:
        raise InvalidInput(f"workflow {workflow.key} has no nodes")
    payload = canonical.dumps(initial)
    parent_run_id, parent_wait_id, serial = parent or (None, None, False)
    run = Run(
        tenant_id=tenant_id,
        run_id=run_id,
        workflow=workflow.name,
        workflow_version=workflow.version,
        status=RunStatus.QUEUED,
        current_node=workflow.start,
        state_version=workflow.state_version,
        checkpoint_seq=0,
        full_seq=0,
        delta_bytes=0,
        full_bytes=len(payload),
        event_seq=1,
        version=1,
        lease_owner=None,
        lease_expires_at=None,
        attempt=0,
        steps=0,
        max_steps=max_steps or workflow.max_steps,
        deadline=deadline,
        resume_at=None,
        wait_id=None,
        cancel_requested=False,
        error=None,
        visits={},
        created_at=now,
        created_by=created_by,
        updated_at=now,
        updated_by=created_by,
        priority=priority,
        parent_run_id=parent_run_id,
        parent_wait_id=parent_wait_id,
        child_serial=serial,
    )
    checkpoint = Checkpoint(
        tenant_id=tenant_id,
        run_id=run_id,
        seq=0,
        node="",
        next_node=workflow.start,
        kind="full",
        payload=payload,
        state_version=workflow.state_version,
        created_at=now,
    )
    return run, checkpoint


def created_event(run: Run, workflow: Workflow[Any], data: Mapping[str, Any]) -> RunEvent:
    return RunEvent(
        tenant_id=run.tenant_id,
        run_id=run.run_id,
        seq=1,
        at=run.created_at,
        type="run.created",
        node=run.current_node,
        duration_ms=None,
        data={"workflow": workflow.key, **data},
    )


def needed(wait: ChildWait, count: int) -> int:
    """How many of ``count`` children must finish for ``wait``."""
    if wait == "all":
        return count
    if wait == "any":
        return 1
    if isinstance(wait, bool) or not isinstance(wait, int) or not 1 <= wait <= count:
        raise InvalidInput(f"wait must be 'all', 'any' or a count from 1 to {count}, got {wait!r}")
    return wait


class ChildRuns:
    """``ctx.children``: the child runs of one node visit."""

    def __init__(
        self,
        claim: Claim,
        node: str,
        visit: int,
        take: Callable[[str, JournalKind], tuple[int, JournalEntry | None]],
    ) -> None:
        self._claim = claim
        self._node = node
        self._visit = visit
        self._take = take

    def start(
        self,
        workflow: Workflow[Any],
        states: Sequence[BaseModel | Mapping[str, Any]],
        *,
        wait: ChildWait = "all",
        parallel: bool = False,
    ) -> list[dict[str, Any]]:
        """Start one child run of ``workflow`` per state and wait until ``wait`` of them
        (``"all"``, ``"any"`` or a count) have finished; their results, one per child
        in order. Unless ``parallel``, one child runs at a time.

        Raises:
            InvalidInput: no state, too many, a state ``workflow`` refuses, or a bad
                ``wait``; nothing was started.
        """
        if self._claim.run.cancel_requested:
            raise RunCancelled()
        taken = self._take(f"children:{workflow.key}", JournalKind.INTERRUPT)
        return _start(self._claim, self._node, self._visit, taken, workflow, states, wait, parallel)


def _start(
    claim: Claim,
    node: str,
    visit: int,
    taken: tuple[int, JournalEntry | None],
    workflow: Workflow[Any],
    states: Sequence[BaseModel | Mapping[str, Any]],
    wait: ChildWait,
    parallel: bool,
) -> list[dict[str, Any]]:
    """Return the results recorded at journal position ``taken``, or park the run on new
    children (raises :class:`Suspend`)."""
    position, entry = taken
    if entry is not None:
        if entry.status is JournalStatus.DONE:
            results: list[dict[str, Any]] = canonical.loads(entry.result or "[]")
            return results
        raise Conflict(f"the children of wait {entry.wait_id} have not finished yet")
    if not 1 <= len(states) <= MAX_CHILDREN:
        raise InvalidInput(f"start from 1 to {MAX_CHILDREN} child runs, got {len(states)}")
    need = needed(wait, len(states))
    parent = claim.run
    ids = [str(claim.ids.new_id()) for _ in states]
    parked = claim.new_wait(
        node,
        visit,
        position,
        JournalKind.INTERRUPT,
        InterruptReason.CHILD_RUNS,
        f"waiting for {need} of {len(states)} child runs of {workflow.key}",
        {"children": ids, "need": need, "workflow": workflow.key},
    )
    now = claim.clock.now()
    children = []
    for run_id, state in zip(ids, states, strict=True):
        child, checkpoint = new_run(
            workflow,
            state,
            tenant_id=parent.tenant_id,
            run_id=run_id,
            created_by=parent.created_by,
            now=now,
            priority=parent.priority,
            parent=(parent.run_id, parked.wait_id, not parallel),
        )
        event = created_event(child, workflow, {"parent_run_id": parent.run_id})
        children.append((child, checkpoint, event))
    intent = claim.journal_entry(
        node,
        visit,
        position,
        f"children:{workflow.key}",
        JournalKind.INTERRUPT,
        status=JournalStatus.INTENT,
        wait_id=parked.wait_id,
    )
    raise Suspend(parked, intent, "children.started", children=children)


def child_results_txn(txn: RunStore, children: Sequence[Run]) -> list[dict[str, Any]]:
    """One result per child, in order: a completed child's final state, a failed one's
    error, or just the status of one cancelled (or stopped before it finished)."""
    return [
        {
            "run_id": child.run_id,
            "status": child.status.value,
            "state": load_state_dict(txn, child)[0]
            if child.status is RunStatus.COMPLETED
            else None,
            "error": child.error,
        }
        for child in children
    ]
