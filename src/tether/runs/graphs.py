"""``app.graphs``: the threads of LangGraph graphs, checkpointed by Tether.

The LangGraph checkpointer (:mod:`tether.integrations.langgraph`) serializes; this
service stores what it is given under the principal's tenant and keeps each thread's run
row in step (:mod:`tether.runs.graph_runs`). Channel values arrive as rows of the
serializer's bytes, a list that grew as only the items appended to an earlier version, and
leave the same way: the chain of rows that makes a value, its own first.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, NotFound
from tether.ids import IdSource, parse_id
from tether.permissions import authorize
from tether.principals import Principal
from tether.runs.graph_runs import (
    END_NODE,
    GraphInterrupt,
    GraphRuns,
    RunMove,
    collect_blobs_txn,
    fresh,
    moved_rows,
    recent,
    resume_values,
    started,
)
from tether.runs.graph_timeline import GraphCheckpointView, timeline
from tether.runs.models import FINISHED, Run, RunStatus
from tether.storage.base import Storage, Transaction
from tether.storage.rows import (
    GraphBlobRow,
    GraphCheckpointPut,
    GraphCheckpointRow,
    GraphThreadRow,
    GraphWriteRow,
    GraphWritesPut,
)
from tether.validation import guarded, identifier

KNOWN_THREADS = 10_000
"""Most threads whose run row a process remembers."""
MAX_LIST = 10_000
"""Most checkpoints one listing returns."""
PRUNE_STRATEGIES = ("keep_latest", "delete")


@dataclass(frozen=True)
class GraphCheckpointWrite(GraphCheckpointPut):
    """One checkpoint of a thread, ready to store, and where it leaves the run."""

    step: int = 0
    next_nodes: Sequence[str] = ()
    """The nodes the checkpoint has yet to run (none: the graph finished)."""


@dataclass(frozen=True)
class GraphTaskWrites(GraphWritesPut):
    """A task's pending writes against a checkpoint, what they mean for the run (its
    ``interrupt()`` calls, the error it raised) and whether they replace earlier ones."""

    interrupts: Sequence[GraphInterrupt] = ()
    failure: str | None = None
    """The error's type and redacted message, when the task raised."""
    node: str = ""


GraphWrite = GraphCheckpointWrite | GraphTaskWrites
"""One item of :meth:`Graphs.write`."""


@dataclass(frozen=True)
class StoredGraphCheckpoint:
    """A checkpoint as stored: for each channel stored apart the chain of rows that makes
    its value (its own first), and the pending writes in the order live execution applies
    them (the inline values are in the checkpoint row)."""

    checkpoint: GraphCheckpointRow
    values: Mapping[str, Sequence[GraphBlobRow]]
    writes: Sequence[GraphWriteRow] = field(default_factory=list)


@guarded
class Graphs:
    """``app.graphs``: checkpoints, pending writes and run rows of LangGraph threads."""

    def __init__(self, storage: Storage, clock: Clock, ids: IdSource, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._runs = GraphRuns(audit, ids.new_id)
        self._threads: dict[tuple[str, str], GraphThreadRow] = {}
        """Run rows of threads as this process last wrote them, so a step of a running
        graph needs no read of its run row (see :func:`tether.runs.graph_runs.fresh`)."""

    # -- writing ---------------------------------------------------------------------------

    def write(self, principal: Principal, items: Sequence[GraphWrite]) -> None:
        """Store checkpoints and pending writes, in order, in one transaction.

        A checkpoint comes with the values it introduces (one already stored at its version
        is kept); one of the root namespace moves the thread's run: ``running`` while it has
        nodes to run, else ``completed``. A task's writes are kept unless ``replace``; their
        interrupts open a wait each (an approval request or a question) and put the run in
        the matching waiting status; a failure (a node raised) marks it ``failed``.
        """
        self.writer(principal).write(items)

    def writer(self, principal: Principal) -> GraphWriter:
        """:meth:`write` for one principal, authorized here once: a checkpointer's writes
        (one a step) pay neither the permission map nor the argument walk again."""
        authorize(principal, "graphs.write")
        return GraphWriter(self._write, principal)

    def _write(self, principal: Principal, items: Sequence[GraphWrite]) -> None:
        now = self._clock.now()
        tenant = principal.tenant_id
        moved: dict[tuple[str, str], GraphThreadRow] = {}
        try:
            change = self._change(tenant, items, now)
            if change == ("", ""):
                self._storage.write_graph_step(tenant, items)
                return
            if change is None or not self._short(principal, change, items, now, moved):
                with self._storage.transaction(tenant) as txn:
                    for item in items:
                        if isinstance(item, GraphCheckpointWrite):
                            self._checkpoint_txn(txn, principal, item, now, moved)
                        else:
                            self._task_writes_txn(txn, principal, item, now, moved)
        except Conflict:
            self._threads.clear()  # a thread this process knew was deleted elsewhere
            raise
        if len(self._threads) > KNOWN_THREADS:
            self._threads.clear()
        self._threads.update(moved)

    def _change(
        self, tenant: str, items: Sequence[GraphWrite], now: datetime
    ) -> tuple[str, str] | None:
        """What the items change in run rows: ``("", "")`` nothing (checkpoints of a
        running graph this process wrote a moment ago that still has nodes to run, or of
        its subgraphs, and writes without interrupts or errors); ``("start", thread)``
        only the start of one thread this process has not written, whose checkpoints
        here all have nodes to run; ``("finish", thread)`` only the completion of one
        such running graph by its last checkpoint here; ``None``: more than that."""
        change = ("", "")
        for item in items:
            if isinstance(item, GraphTaskWrites):
                if item.interrupts or item.failure is not None:
                    return None
                continue
            row = item.checkpoint
            known = self._threads.get((tenant, row.thread_id))
            finished = row.checkpoint_ns == "" and not item.next_nodes
            if change[0] == "finish" and row.thread_id == change[1]:
                return None  # written on after it finished
            if known is None:
                kind = "start"
                if finished:
                    return None
            elif not recent(known, now):
                return None
            elif finished:
                kind = "finish"
            else:
                continue
            if change[0] and change != (kind, row.thread_id):
                return None
            change = (kind, row.thread_id)
        return change

    def _short(
        self,
        principal: Principal,
        change: tuple[str, str],
        items: Sequence[GraphWrite],
        now: datetime,
        moved: dict[tuple[str, str], GraphThreadRow],
    ) -> bool:
        """Write ``items`` with the one change of a run row among them (see
        :meth:`_change`) in one short write (:meth:`Storage.write_graph_start` or
        :meth:`Storage.write_graph_finish`); whether done (``False``: nothing written,
        the thread exists or its run row changed since this process wrote it)."""
        tenant = principal.tenant_id
        kind, thread_id = change
        key = (tenant, thread_id)
        if kind == "start":
            start = self._runs.new_thread(principal, thread_id, now)
            entry = functools.partial(self._runs.started_entry, principal, start)
            if not self._storage.write_graph_start(tenant, start, entry, items):
                return False
            moved[key] = started(start)
            return True
        last = [
            item
            for item in items
            if isinstance(item, GraphCheckpointWrite) and item.checkpoint.thread_id == thread_id
        ][-1]
        move = RunMove(status=RunStatus.COMPLETED, node=END_NODE, steps=last.step)
        update, event = moved_rows(principal, self._threads[key], move, now)
        if event is None or not self._storage.write_graph_finish(tenant, update, event, items):
            return False
        moved[key] = GraphThreadRow(update.run_id, update.status, update.event_seq, now)
        return True

    def _checkpoint_txn(
        self,
        txn: Transaction,
        principal: Principal,
        write: GraphCheckpointWrite,
        now: datetime,
        moved: dict[tuple[str, str], GraphThreadRow],
    ) -> None:
        row = write.checkpoint
        key = (principal.tenant_id, row.thread_id)
        nodes = ",".join(write.next_nodes)
        status = RunStatus.RUNNING if nodes else RunStatus.COMPLETED
        root = row.checkpoint_ns == ""
        known = moved.get(key) or self._threads.get(key)
        if root and known is not None and recent(known, now):
            # A step of a running graph: this process wrote its run row a moment ago.
            thread = known
        else:
            thread = self._runs.ensure_thread_txn(
                txn, principal, row.thread_id, now, new=known is None
            )
        txn.put_graph_checkpoint(
            principal.tenant_id, row, graph_run_id=write.graph_run_id, blobs=write.blobs
        )
        if not root:
            return
        if fresh(thread, status, now):
            moved[key] = thread
            return
        move = RunMove(status=status, node=nodes or END_NODE, steps=write.step)
        settled = self._settle_txn(txn, principal, thread, row.checkpoint_id, move, now)
        if settled is None:  # the remembered row was stale: read it and move again
            thread = self._runs.ensure_thread_txn(txn, principal, row.thread_id, now)
            settled = self._settle_txn(txn, principal, thread, row.checkpoint_id, move, now)
        moved[key] = _current(settled)

    def _settle_txn(
        self,
        txn: Transaction,
        principal: Principal,
        thread: GraphThreadRow,
        checkpoint_id: str,
        move: RunMove,
        now: datetime,
    ) -> GraphThreadRow | None:
        """The run row after a root checkpoint: as it was while the run waits on an
        interrupt of this checkpoint or a later one, else moved (``None``: ``thread`` was
        stale, nothing written)."""
        if self._runs.still_waiting_txn(txn, principal.tenant_id, thread, checkpoint_id):
            return thread
        return self._runs.move_txn(txn, principal, thread, move, now)

    def _task_writes_txn(
        self,
        txn: Transaction,
        principal: Principal,
        task: GraphTaskWrites,
        now: datetime,
        moved: dict[tuple[str, str], GraphThreadRow],
    ) -> None:
        tenant = principal.tenant_id
        txn.put_graph_writes(
            tenant,
            task.thread_id,
            task.checkpoint_ns,
            task.checkpoint_id,
            task.writes,
            replace=task.replace,
        )
        if not task.interrupts and task.failure is None:
            return
        thread = self._runs.ensure_thread_txn(txn, principal, task.thread_id, now)
        move = self._runs.open_waits_txn(txn, principal, thread, task.interrupts, now)
        if move is None and task.failure is not None:
            move = RunMove(status=RunStatus.FAILED, node=task.node, error=task.failure)
        if move is not None:
            moved[(tenant, task.thread_id)] = _current(
                self._runs.move_txn(txn, principal, thread, move, now)
            )

    # -- reading ---------------------------------------------------------------------------

    def checkpoint(
        self,
        principal: Principal,
        thread_id: str,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
    ) -> StoredGraphCheckpoint | None:
        """The checkpoint ``checkpoint_id`` of the thread's namespace, or its latest."""
        authorize(principal, "graphs.checkpoint")
        tenant = principal.tenant_id
        found = self._storage.read_graph_checkpoint(tenant, thread_id, checkpoint_ns, checkpoint_id)
        if found is None:
            return None
        row, writes = found
        if not row.blob_channels:
            return StoredGraphCheckpoint(checkpoint=row, values={}, writes=writes)
        # A stored value never changes at its version, so the values can be read after the
        # checkpoint; one deleted in between (a prune, a deleted thread) reads it all again.
        with self._storage.transaction(tenant, write=False) as txn:
            values = _chains(txn, tenant, row)
            if all(chain and chain[-1].base_version is None for chain in values.values()):
                return StoredGraphCheckpoint(checkpoint=row, values=values, writes=writes)
        with self._storage.transaction(tenant, write=False) as txn:
            again = txn.get_graph_checkpoint(tenant, thread_id, checkpoint_ns, checkpoint_id)
            return None if again is None else _stored(txn, tenant, again)

    def checkpoints(
        self,
        principal: Principal,
        *,
        thread_id: str | None = None,
        checkpoint_ns: str | None = None,
        checkpoint_id: str | None = None,
        before: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int = MAX_LIST,
    ) -> list[StoredGraphCheckpoint]:
        """Checkpoints newest first: of one thread (``None``: every thread of the tenant)
        and namespace (``None``: every namespace), before the checkpoint id ``before``,
        whose metadata holds every key of ``metadata`` with the same value."""
        authorize(principal, "graphs.checkpoints")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant, write=False) as txn:
            rows = txn.list_graph_checkpoints(
                tenant,
                thread_id=thread_id,
                checkpoint_ns=checkpoint_ns,
                checkpoint_id=checkpoint_id,
                before=before,
                filter_json=canonical.dumps(dict(metadata or {})),
                limit=min(limit, MAX_LIST),
            )
            return [_stored(txn, tenant, row) for row in rows]

    def thread_run(self, principal: Principal, thread_id: str) -> Run | None:
        """The run row of a thread (``tether runs show`` shows the same)."""
        authorize(principal, "graphs.thread_run")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant, write=False) as txn:
            thread = txn.get_graph_thread(tenant, thread_id)
            return None if thread is None else txn.get_run(tenant, thread.run_id)

    def timeline(self, principal: Principal, run_id: str) -> list[GraphCheckpointView]:
        """The checkpoints of the LangGraph thread behind run ``run_id``, oldest first,
        each with what changed, what its step left pending and the interrupts it raised
        (empty for a run that is not a LangGraph thread; at most :data:`MAX_LIST`, the
        newest)."""
        authorize(principal, "graphs.timeline")
        tenant = principal.tenant_id
        parse_id(run_id, what="run id")
        with self._storage.transaction(tenant, write=False) as txn:
            if txn.get_run(tenant, run_id) is None:
                raise NotFound(f"run {run_id} does not exist in tenant {tenant!r}")
            thread_id = txn.graph_thread_of_run(tenant, run_id)
            if thread_id is None:
                return []
            rows = txn.list_graph_checkpoints(
                tenant,
                thread_id=thread_id,
                checkpoint_ns=None,
                checkpoint_id=None,
                before=None,
                filter_json="{}",
                limit=MAX_LIST,
            )
            writes = txn.list_graph_thread_writes(tenant, thread_id)
            waits = txn.list_waits(tenant, run_id=run_id, limit=MAX_LIST)
        return timeline(rows, writes, waits)

    def resume_values(self, principal: Principal, thread_id: str) -> dict[str, Any]:
        """What each interrupt of the thread decided in Tether resumes with, by interrupt
        id (see :func:`tether.runs.graph_runs.resume_values`)."""
        authorize(principal, "graphs.resume_values")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant, write=False) as txn:
            thread = txn.get_graph_thread(tenant, thread_id)
            if thread is None:
                return {}
            return resume_values(txn.list_waits(tenant, run_id=thread.run_id, limit=10_000))

    # -- deleting, copying, pruning --------------------------------------------------------

    def delete_thread(self, principal: Principal, thread_id: str) -> None:
        """Delete every checkpoint, value and write of the thread. Its run row stays (as
        every run's does), ``cancelled`` unless it had finished."""
        authorize(principal, "graphs.delete_thread")
        tenant = principal.tenant_id
        now = self._clock.now()
        self._threads.pop((tenant, thread_id), None)
        with self._storage.transaction(tenant) as txn:
            thread = txn.get_graph_thread(tenant, thread_id)
            txn.delete_graph_thread(tenant, thread_id)
            if thread is None:
                return
            status = RunStatus(thread.status)
            final = status if status in FINISHED else RunStatus.CANCELLED
            move = RunMove(status=final, node=END_NODE, event="graph.thread_deleted")
            _current(self._runs.move_txn(txn, principal, thread, move, now))

    def delete_for_runs(self, principal: Principal, graph_run_ids: Sequence[str]) -> None:
        """Delete every checkpoint (and its writes) that these LangGraph runs wrote."""
        authorize(principal, "graphs.delete_for_runs")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant) as txn:
            threads: set[str] = set()
            for graph_run_id in graph_run_ids:
                for thread_id, ns, checkpoint_id in txn.list_graph_checkpoints_of_run(
                    tenant, graph_run_id
                ):
                    txn.delete_graph_checkpoint(tenant, thread_id, ns, checkpoint_id)
                    threads.add(thread_id)
            for thread_id in sorted(threads):
                collect_blobs_txn(txn, tenant, thread_id)

    def copy_thread(
        self, principal: Principal, source_thread_id: str, target_thread_id: str
    ) -> None:
        """Copy every checkpoint, value and write of a thread to another thread, which
        gets a run of its own in the source's status."""
        authorize(principal, "graphs.copy_thread")
        tenant = principal.tenant_id
        now = self._clock.now()
        with self._storage.transaction(tenant) as txn:
            source = txn.get_graph_thread(tenant, source_thread_id)
            if source is None:
                return
            status = RunStatus(source.status)
            self._runs.ensure_thread_txn(txn, principal, target_thread_id, now, status=status)
            txn.copy_graph_thread(tenant, source_thread_id, target_thread_id)

    def prune(
        self, principal: Principal, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        """``keep_latest``: keep each namespace's latest checkpoint (and its writes and
        the values it reads); ``delete``: delete the threads (see :meth:`delete_thread`)."""
        authorize(principal, "graphs.prune")
        if strategy not in PRUNE_STRATEGIES:
            raise InvalidInput(f"strategy must be one of {', '.join(PRUNE_STRATEGIES)}")
        if strategy == "delete":
            for thread_id in thread_ids:
                self.delete_thread(principal, thread_id)
            return
        tenant = principal.tenant_id
        with self._storage.transaction(tenant) as txn:
            for thread_id in thread_ids:
                prune_thread_txn(txn, tenant, thread_id)


class GraphWriter:
    """Writes a checkpointer hands over, as one principal, authorized when made
    (:meth:`Graphs.writer`). Each thread id is checked the first time it is written."""

    def __init__(
        self, write: Callable[[Principal, Sequence[GraphWrite]], None], principal: Principal
    ) -> None:
        self._write = write
        self._principal = principal
        self._checked: set[str] = set()

    def write(self, items: Sequence[GraphWrite]) -> None:
        """See :meth:`Graphs.write`."""
        for item in items:
            if isinstance(item, GraphTaskWrites):
                thread_id = item.thread_id
            else:
                thread_id = item.checkpoint.thread_id
            if thread_id not in self._checked:
                identifier("thread_id", thread_id)
                if len(self._checked) >= KNOWN_THREADS:
                    self._checked.clear()
                self._checked.add(thread_id)
        self._write(self._principal, items)


def prune_thread_txn(txn: Transaction, tenant_id: str, thread_id: str) -> None:
    """Keep each namespace's latest checkpoint of the thread, its writes and the values
    it reads; delete the rest. Run retention compacts a thread's run with this."""
    txn.prune_graph_checkpoints(tenant_id, thread_id)
    collect_blobs_txn(txn, tenant_id, thread_id)


def _current(thread: GraphThreadRow | None) -> GraphThreadRow:
    """A run row moved from one read in the same transaction (which cannot be stale)."""
    if thread is None:
        raise Conflict("the thread's run changed while it was being written; retry")
    return thread


def _stored(txn: Transaction, tenant: str, row: GraphCheckpointRow) -> StoredGraphCheckpoint:
    values = _chains(txn, tenant, row)
    writes = txn.list_graph_writes(tenant, row.thread_id, row.checkpoint_ns, row.checkpoint_id)
    return StoredGraphCheckpoint(
        checkpoint=row, values={k: v for k, v in values.items() if v}, writes=writes
    )


def _chains(
    txn: Transaction, tenant: str, row: GraphCheckpointRow
) -> dict[str, list[GraphBlobRow]]:
    """The chain of rows of each channel the checkpoint stores apart (empty: not stored)."""
    versions: dict[str, Any] = json.loads(row.checkpoint_json).get("channel_versions", {})
    return {
        channel: txn.graph_blob_chain(
            tenant, row.thread_id, row.checkpoint_ns, channel, str(versions[channel])
        )
        for channel in row.blob_channels
        if channel in versions
    }
