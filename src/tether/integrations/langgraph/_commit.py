"""Group commit: a step's task writes and its checkpoint in one transaction.

LangGraph hands each task's writes to the checkpointer from a background thread and goes
on to build the step's checkpoint, so the two arrive a moment apart; written one by one
they cost two commits a step. Here a checkpoint is written at once, together with every
write waiting for it; writes wait at most ``window`` for a checkpoint, then are written
on their own. A call returns only once what it handed over is committed, so a write is as
durable when ``put_writes`` returns as it would be on its own. One transaction runs at a
time (on SQLite, a second writer would sleep in the busy handler).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from tether.runs.graphs import GraphWrite


class _Ticket:
    """An item handed over, and how its caller learns it is committed: ``signal``, a lock
    taken when the caller waits, released by the commit that holds the item (a lock
    rather than a condition: no Python code runs to wait or to wake)."""

    __slots__ = ("error", "item", "signal")

    def __init__(self, item: GraphWrite, signal: threading.Lock | None) -> None:
        self.item = item
        self.signal = signal
        self.error: Exception | None = None


class GroupCommit:
    """Batches :class:`~tether.runs.graphs.GraphWrite` items into transactions."""

    def __init__(self, write: Callable[[Sequence[GraphWrite]], None], *, window: float) -> None:
        self._write = write
        self._window = window
        self._lock = threading.Lock()
        self._pending: list[_Ticket] = []
        self._committing = threading.Lock()

    def submit(self, item: GraphWrite, *, wait: bool) -> None:
        """Hand over ``item``; return once it is committed (raise what writing it raised).

        ``wait``: let it wait up to the window for an item that is not waiting (a
        checkpoint) to share a transaction with.
        """
        if not wait:
            ticket = _Ticket(item, None)
            self._commit(ticket)
        else:
            signal = threading.Lock()
            signal.acquire()
            ticket = _Ticket(item, signal)
            with self._lock:
                self._pending.append(ticket)
            if not signal.acquire(timeout=self._window):
                # Commits it, or waits for the commit that took it a moment ago.
                self._commit(None)
        if ticket.error is not None:
            raise ticket.error

    def flush(self) -> None:
        """Commit everything handed over so far."""
        self._commit(None)

    def _commit(self, own: _Ticket | None) -> None:
        """Commit what waits, and ``own`` last, in one transaction; release the waiters."""
        with self._committing:
            with self._lock:
                batch, self._pending = self._pending, []
            if own is not None:
                batch.append(own)
            if not batch:
                return
            try:
                self._write([ticket.item for ticket in batch])
            except Exception as exc:
                if len(batch) == 1:
                    batch[0].error = exc
                else:
                    self._one_by_one(batch)
            for ticket in batch:
                if ticket.signal is not None:
                    ticket.signal.release()

    def _one_by_one(self, batch: Sequence[_Ticket]) -> None:
        """After a batch failed: each item alone, so one bad item fails only its caller."""
        for ticket in batch:
            try:
                self._write([ticket.item])
            except Exception as exc:
                ticket.error = exc
