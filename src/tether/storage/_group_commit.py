"""Group commit: the durable steps of several threads of one process, in one transaction.

A commit costs a flush of the write-ahead log to disk (PostgreSQL's WAL fsync, SQLite's
FULL sync): a few milliseconds on ordinary disks, whatever the transaction holds. An
executor that drives one run waits that long at every node boundary, so one executor
commits a few hundred steps a second at most. When several executors of a process (the
threads of ``tether worker --concurrency N``) reach a node boundary at about the same
time, their writes share one transaction and one flush.

Leader and followers, no timer: a thread whose step finds no commit under way commits it
at once, alone (so a lone executor pays no delay). A step that arrives while a commit is
under way queues; when that commit returns, the first queued thread becomes the leader
and commits every step queued meanwhile, in one transaction, then wakes each of their
threads with its own outcome. Nobody waits for more than the commit under way and its
own.

Durability is unchanged: a step's caller returns only once the transaction holding its
writes has committed, and a transaction commits all of its steps or none. Each step keeps
its own guard (the run row at the version and lease its claim holds): the backend writes a
step whose guard fails (a lost lease, a cancellation) in no part and gives its caller the
same error as a step committed alone, while the batch's other steps commit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tether.errors import StorageUnavailable, TetherError
from tether.storage.rows import StepWrite

StepOutcome = tuple[int, bool] | BaseException
"""A step's result (the run's new version, whether cancellation was requested) or the
error its caller raises."""

CommitBatch = Callable[[Sequence[StepWrite]], list[StepOutcome]]
"""Commits the steps in one transaction and returns each one's outcome, in order; raises
if the transaction as a whole failed (every caller then gets that error)."""

MAX_BATCH = 64
"""The most steps one transaction takes; the rest wait for the next commit."""


@dataclass(eq=False)
class _Slot:
    write: StepWrite
    ready: threading.Event | None = None
    """Set when the step is done or its thread is to lead; only a step that queued
    behind a commit under way has one (a leader waits for nobody)."""
    lead: bool = False
    done: bool = False
    outcome: StepOutcome | None = None


class GroupCommit:
    """Funnels :meth:`~tether.storage.base.Storage.write_step` calls of one process into
    shared transactions. Thread-safe; ``commit_batch`` runs on the leader's thread."""

    def __init__(self, commit_batch: CommitBatch, *, max_batch: int = MAX_BATCH) -> None:
        self._commit_batch = commit_batch
        self._max_batch = max_batch
        self._lock = threading.Lock()
        self._queue: list[_Slot] = []
        self._busy = False
        self.batches = 0
        """Transactions committed (or attempted) so far."""
        self.steps = 0
        """Steps they held."""

    @property
    def queued(self) -> int:
        """Steps waiting for a commit to start (those of the commit under way are not)."""
        with self._lock:
            return len(self._queue)

    def write(self, write: StepWrite) -> tuple[int, bool]:
        """Commit ``write`` with whatever other steps are queued; its own outcome.

        A step that finds no commit under way is the whole batch of its own (nothing can
        be queued then), so the common case of a lone executor takes the lock twice and
        makes no event to wait on."""
        slot = _Slot(write)
        with self._lock:
            if self._busy:
                slot.ready = threading.Event()
                self._queue.append(slot)
            else:
                self._busy = slot.lead = True
        if slot.ready is None:
            self._commit([slot])
        else:
            slot.ready.wait()
            if not slot.done:
                with self._lock:
                    batch = self._queue[: self._max_batch]
                    del self._queue[: self._max_batch]
                self._commit(batch)
        outcome = slot.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome is None:
            raise RuntimeError("a grouped step finished without an outcome")
        return outcome

    def _commit(self, batch: list[_Slot]) -> None:
        """Commit ``batch`` (this thread's step among them), give each step its outcome,
        wake their threads, and hand the lead to the first step queued meanwhile."""
        outcomes: Sequence[StepOutcome] | None = None
        try:
            outcomes = self._commit_batch([s.write for s in batch])
            if len(outcomes) != len(batch):
                raise RuntimeError("the batch commit returned the wrong number of outcomes")
        except Exception as exc:
            outcomes = [_own_copy(exc) for _ in batch]
        finally:
            if outcomes is None:  # the leader was interrupted (KeyboardInterrupt, exit)
                unknown = StorageUnavailable("the commit was interrupted; its outcome is unknown")
                outcomes = [_own_copy(unknown) for _ in batch]
            with self._lock:
                self.batches += 1
                self.steps += len(batch)
                successor = self._queue[0] if self._queue else None
                if successor is None:
                    self._busy = False
                else:
                    successor.lead = True
            if successor is not None and successor.ready is not None:
                successor.ready.set()
            for slot, outcome in zip(batch, outcomes, strict=True):
                slot.outcome, slot.done = outcome, True
                if slot.ready is not None:
                    slot.ready.set()


def _own_copy(exc: Exception) -> Exception:
    """The same error for one caller of a failed batch: each thread raises an instance of
    its own (a shared one would gather every thread's traceback)."""
    if type(exc).__init__ is TetherError.__init__ and isinstance(exc, TetherError):
        copy = type(exc)(exc.message)
        copy.__cause__ = exc.__cause__
        return copy
    return exc
