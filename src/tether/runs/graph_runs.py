"""The run row behind each LangGraph thread, and what a thread's writes do to it.

A thread checkpointed by Tether is a run of the workflow :data:`GRAPH_WORKFLOW` (version
0, which no worker ever claims): ``tether runs ls`` lists it, retention compacts it, and
its interrupts are waits that ``tether approvals`` and ``tether runs answer`` settle. The
run's status follows the thread: ``running`` while its latest checkpoint has nodes to run,
``completed`` when it has none, ``waiting_for_approval`` / ``waiting_for_user`` on an
interrupt, ``queued`` once that interrupt is decided and the graph may resume,
``failed`` when a node raised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tether import canonical
from tether.audit.log import AuditLog
from tether.errors import Conflict
from tether.principals import Principal, Role
from tether.runs.models import (
    FINISHED,
    InterruptReason,
    JournalKind,
    Run,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.storage.base import Transaction
from tether.storage.rows import (
    AuditRow,
    GraphEvent,
    GraphRunUpdate,
    GraphThreadRow,
    GraphThreadStart,
)

GRAPH_WORKFLOW = "langgraph"
"""The workflow name of every LangGraph thread's run."""
GRAPH_WORKFLOW_VERSION = 0
"""No registered workflow has version 0, so no Tether worker claims a thread's run."""
END_NODE = "__end__"
WAITING_STATUSES = frozenset(
    {RunStatus.WAITING_FOR_APPROVAL.value, RunStatus.WAITING_FOR_USER.value}
)
_STARTED_DETAILS = {"workflow": GRAPH_WORKFLOW}
RUNNING_REFRESH = timedelta(seconds=1)
"""How stale a running thread's run row may get (its current node, its step count)."""


@dataclass(frozen=True)
class GraphInterrupt:
    """An ``interrupt()`` of a LangGraph node, as a Tether wait sees it."""

    interrupt_id: str
    node: str
    checkpoint_id: str
    """The checkpoint whose step was interrupted."""
    request: Mapping[str, Any]
    """JSON: for an approval the :class:`~tether.runs.models.ApprovalRequest` fields, else
    ``{"question": ...}``."""
    approval: bool = False


@dataclass(frozen=True)
class RunMove:
    """Where a thread's writes move its run row."""

    status: RunStatus
    node: str
    steps: int | None = None
    wait_id: str | None = None
    error: str | None = None
    event: str = ""
    data: Mapping[str, Any] | None = None


class GraphRuns:
    """Creates and moves the run rows of LangGraph threads inside the caller's
    transaction."""

    def __init__(self, audit: AuditLog, new_id: Any) -> None:
        self._audit = audit
        self._new_id = new_id

    def ensure_thread_txn(
        self,
        txn: Transaction,
        principal: Principal,
        thread_id: str,
        now: datetime,
        *,
        status: RunStatus = RunStatus.RUNNING,
        new: bool = False,
    ) -> GraphThreadRow:
        """The thread's run row, created (with its ``graph.thread_started`` event and a
        ``run.started`` audit entry) the first time the thread is written.

        ``new``: the caller has not seen the thread, so it is created without reading it
        first (an existing thread is then read after an insert that wrote nothing).
        """
        tenant = principal.tenant_id
        if not new:
            found = txn.get_graph_thread(tenant, thread_id)
            if found is not None:
                return found
        start = self.new_thread(principal, thread_id, now, status=status)
        if not txn.start_graph_thread(tenant, start):
            found = txn.get_graph_thread(tenant, thread_id)
            if found is None:
                raise Conflict("the thread was deleted while it was being written; retry")
            return found
        self._audit.record_txn(
            txn,
            tenant_id=tenant,
            actor_id=principal.principal_id,
            action="run.started",
            target=f"run:{start.run_id}",
            details=_STARTED_DETAILS,
        )
        return started(start)

    def new_thread(
        self,
        principal: Principal,
        thread_id: str,
        now: datetime,
        *,
        status: RunStatus = RunStatus.RUNNING,
    ) -> GraphThreadStart:
        """The rows that start a thread: its run (a new id), the thread row, the
        ``graph.thread_started`` event."""
        return GraphThreadStart(
            thread_id=thread_id,
            run_id=str(self._new_id()),
            status=status.value,
            created_by=principal.principal_id,
            at=now,
            event="graph.thread_started",
        )

    def started_entry(
        self, principal: Principal, start: GraphThreadStart, seq: int, head: str
    ) -> AuditRow:
        """The ``run.started`` audit entry of a new thread's run, after the tenant's head
        (``seq``, ``head``, locked by the transaction that stores both)."""
        return self._audit.next_entry(
            principal.tenant_id,
            seq,
            head,
            actor_id=principal.principal_id,
            action="run.started",
            target=f"run:{start.run_id}",
            details=_STARTED_DETAILS,
        )

    def move_txn(
        self,
        txn: Transaction,
        principal: Principal,
        thread: GraphThreadRow,
        move: RunMove,
        now: datetime,
    ) -> GraphThreadRow | None:
        """Set the run row as ``move`` says; a change of status is also an event. A run
        that waited and moves on without its waits decided closes them (``cancelled``).
        A run that stays ``running`` is written at most every :data:`RUNNING_REFRESH`
        (its node and step count lag by that much), so a fast graph does not pay for a
        run row at every step. Returns the row as it now stands, or ``None`` (nothing
        written) if the stored row gained an event since ``thread`` was read."""
        tenant = principal.tenant_id
        previous = RunStatus(thread.status)
        changed = previous is not move.status
        if not changed and fresh(thread, move.status, now):
            return thread
        if changed and previous.value in WAITING_STATUSES:
            self._close_waits_txn(txn, principal, thread.run_id, now)
        if changed and previous in FINISHED:
            txn.forget_run_retained(tenant, thread.run_id)
        update, event = moved_rows(principal, thread, move, now)
        if not txn.update_graph_run(tenant, update):
            return None
        if event is not None:
            txn.insert_graph_event(tenant, event)
        return GraphThreadRow(thread.run_id, update.status, update.event_seq, now)

    def open_waits_txn(
        self,
        txn: Transaction,
        principal: Principal,
        thread: GraphThreadRow,
        interrupts: Sequence[GraphInterrupt],
        now: datetime,
    ) -> RunMove | None:
        """A wait per interrupt not already waited on; where the run goes (``None``: all
        were known)."""
        tenant = principal.tenant_id
        known = {
            str(wait.request.get("interrupt_id"))
            for wait in txn.list_waits(tenant, run_id=thread.run_id, limit=10_000)
        }
        opened: list[Wait] = []
        for interrupt in interrupts:
            if interrupt.interrupt_id in known:
                continue
            known.add(interrupt.interrupt_id)
            opened.append(_wait(tenant, thread.run_id, principal, interrupt, self._new_id(), now))
        for wait in opened:
            txn.insert_wait(wait)
        if not opened:
            return None
        first = opened[0]
        return RunMove(
            status=first.reason.status,
            node=first.node,
            wait_id=first.wait_id,
            event="graph.interrupted",
            data={"waits": [wait.wait_id for wait in opened]},
        )

    def still_waiting_txn(
        self, txn: Transaction, tenant_id: str, thread: GraphThreadRow, checkpoint_id: str
    ) -> bool:
        """Whether the run waits on an interrupt of ``checkpoint_id`` or a later checkpoint:
        that checkpoint, stored late (LangGraph may write it in the background after the
        interrupt), does not move the run on."""
        if thread.status not in WAITING_STATUSES:
            return False
        return any(
            str(wait.request.get("checkpoint_id", "")) >= checkpoint_id
            for wait in txn.list_waits(
                tenant_id, status=WaitStatus.OPEN.value, run_id=thread.run_id, limit=10_000
            )
        )

    def _close_waits_txn(
        self, txn: Transaction, principal: Principal, run_id: str, now: datetime
    ) -> None:
        tenant = principal.tenant_id
        for wait in txn.list_waits(tenant, status=WaitStatus.OPEN.value, run_id=run_id):
            txn.resolve_wait(
                tenant,
                wait.wait_id,
                status=WaitStatus.CANCELLED.value,
                resolved_at=now,
                resolved_by=principal.principal_id,
                resolution={"reason": "the graph resumed without this wait's answer"},
            )


def started(start: GraphThreadStart) -> GraphThreadRow:
    """The run row of a thread as :meth:`GraphRuns.new_thread` starts it."""
    return GraphThreadRow(
        run_id=start.run_id, status=start.status, event_seq=1, updated_at=start.at
    )


def moved_rows(
    principal: Principal, thread: GraphThreadRow, move: RunMove, now: datetime
) -> tuple[GraphRunUpdate, GraphEvent | None]:
    """The guarded update of the run row ``thread`` that ``move`` makes, and the event of
    its change of status (``None``: the status stays)."""
    changed = thread.status != move.status.value
    seq = thread.event_seq + (1 if changed else 0)
    update = GraphRunUpdate(
        run_id=thread.run_id,
        status=move.status.value,
        current_node=move.node,
        steps=max(move.steps or 0, 0),
        wait_id=move.wait_id,
        error=move.error,
        event_seq=seq,
        updated_at=now,
        updated_by=principal.principal_id,
        expected_event_seq=thread.event_seq,
    )
    if not changed:
        return update, None
    event_type = move.event or f"graph.{move.status.value}"
    return update, GraphEvent(thread.run_id, seq, now, event_type, move.node, move.data or {})


def is_graph_run(run: Run) -> bool:
    """Whether ``run`` is the run of a LangGraph thread (workflow version 0)."""
    return run.workflow == GRAPH_WORKFLOW and run.workflow_version == GRAPH_WORKFLOW_VERSION


_RUNNING = RunStatus.RUNNING.value


def recent(thread: GraphThreadRow, now: datetime) -> bool:
    """Whether a ``running`` run row this process wrote is recent enough to move without
    reading it first (a stale one is caught by the guarded update; see :meth:`move_txn`)."""
    return thread.status == _RUNNING and now < thread.updated_at + RUNNING_REFRESH


def fresh(thread: GraphThreadRow, status: RunStatus, now: datetime) -> bool:
    """Whether a ``running`` run row that stays ``running`` needs no write yet."""
    return status is RunStatus.RUNNING and recent(thread, now)


def resume_values(waits: Sequence[Wait]) -> dict[str, Any]:
    """The value each decided interrupt resumes with, by interrupt id: for an approval
    ``{"approved": ..., "status": ..., "decided_by": ..., "comment": ...}``, for another
    interrupt the answer given."""
    values: dict[str, Any] = {}
    for wait in waits:
        interrupt_id = wait.request.get("interrupt_id")
        if not isinstance(interrupt_id, str) or wait.resolution is None:
            continue
        if wait.kind is JournalKind.APPROVAL and wait.status in (
            WaitStatus.APPROVED,
            WaitStatus.REJECTED,
        ):
            values[interrupt_id] = {
                "approved": wait.status is WaitStatus.APPROVED,
                "status": wait.status.value,
                "decided_by": wait.resolved_by,
                "comment": wait.resolution.get("comment"),
            }
        elif wait.status is WaitStatus.ANSWERED:
            values[interrupt_id] = wait.resolution.get("answer")
    return values


def needed_blobs(
    checkpoints: Sequence[tuple[str, str, Sequence[str]]],
    links: Sequence[tuple[tuple[str, str, str], str | None]],
) -> set[tuple[str, str, str]]:
    """The stored values the given checkpoints (namespace, checkpoint JSON, channels stored
    apart) still read: each such channel at its version, and every value it extends."""
    needed: set[tuple[str, str, str]] = set()
    for ns, text, channels in checkpoints:
        versions = json.loads(text).get("channel_versions", {})
        needed.update(
            (ns, channel, str(versions[channel])) for channel in channels if channel in versions
        )
    base_of = dict(links)
    pending = list(needed)
    while pending:
        ns, channel, version = pending.pop()
        base = base_of.get((ns, channel, version))
        if base is not None and (ns, channel, base) not in needed:
            needed.add((ns, channel, base))
            pending.append((ns, channel, base))
    return needed


def collect_blobs_txn(txn: Transaction, tenant_id: str, thread_id: str) -> int:
    """Delete the thread's stored values no checkpoint reads any more; how many."""
    links = txn.list_graph_blob_links(tenant_id, thread_id)
    needed = needed_blobs(txn.list_graph_thread_checkpoints(tenant_id, thread_id), links)
    unused = [key for key, _ in links if key not in needed]
    txn.delete_graph_blobs(tenant_id, thread_id, unused)
    return len(unused)


def _wait(
    tenant: str,
    run_id: str,
    principal: Principal,
    interrupt: GraphInterrupt,
    wait_id: Any,
    now: datetime,
) -> Wait:
    request = {
        **interrupt.request,
        "interrupt_id": interrupt.interrupt_id,
        "checkpoint_id": interrupt.checkpoint_id,
    }
    action = request.get("action")
    if interrupt.approval:
        message = str(request.get("title") or f"approve {interrupt.node}")
    else:
        message = str(request.get("question") or f"{interrupt.node} asks for input")
    return Wait(
        tenant_id=tenant,
        wait_id=str(wait_id),
        run_id=run_id,
        node=interrupt.node,
        visit=0,
        position=0,
        kind=JournalKind.APPROVAL if interrupt.approval else JournalKind.INTERRUPT,
        reason=(
            InterruptReason.APPROVAL_REQUIRED
            if interrupt.approval
            else InterruptReason.CLARIFICATION_REQUIRED
        ),
        status=WaitStatus.OPEN,
        message=message,
        request=request,
        action_digest=(
            canonical.digest(action if isinstance(action, dict) else {})
            if interrupt.approval
            else None
        ),
        approver_role=(
            str(request.get("approver_role") or Role.APPROVER.value) if interrupt.approval else None
        ),
        requested_by=principal.principal_id,
        resume_at=None,
        expires_at=None,
        created_at=now,
        resolved_at=None,
        resolved_by=None,
        resolution=None,
    )
