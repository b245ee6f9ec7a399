"""A worker process: claim runnable runs and execute them until told to stop."""

from __future__ import annotations

import importlib
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tether.errors import InvalidInput, StorageUnavailable
from tether.redaction import get_logger
from tether.runs.engine import Executor
from tether.runs.service import Runs
from tether.runs.workflow import Workflow, WorkflowRegistry
from tether.storage.base import Wakeups

log = get_logger("tether.worker")


def load_registry(spec: str) -> WorkflowRegistry:
    """Import ``module:attribute`` naming a registry, a workflow, or a function returning one.

    The current folder is importable, so ``examples.case_review.workflow:registry`` works
    from the repository root.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise InvalidInput(f"--workflows {spec!r}: use module.path:attribute")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidInput(f"cannot import {module_name!r} for --workflows: {exc}") from exc
    target: Any = getattr(module, attribute, None)
    if target is None:
        raise InvalidInput(f"module {module_name!r} has no attribute {attribute!r}")
    if callable(target) and not isinstance(target, (WorkflowRegistry, Workflow)):
        target = target()
    if isinstance(target, Workflow):
        return WorkflowRegistry(target)
    if isinstance(target, WorkflowRegistry):
        return target
    raise InvalidInput(f"{spec} is neither a WorkflowRegistry nor a Workflow")


MAX_BACKOFF_S = 10.0
"""The longest a worker waits between attempts while storage is unavailable."""


class Backoff:
    """Exponential backoff with full jitter, from ``first_s`` up to ``max_s``."""

    def __init__(
        self, first_s: float = 0.05, max_s: float = MAX_BACKOFF_S, rng: random.Random | None = None
    ) -> None:
        self.first_s = first_s
        self.max_s = max_s
        self.rng = rng or random.Random()
        self.failures = 0

    def next_delay(self) -> float:
        ceiling = min(self.max_s, self.first_s * 2 ** min(self.failures, 30))
        self.failures += 1
        return self.rng.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.failures = 0


class Worker:
    """Loops over :meth:`Executor.execute_next`; sleeps on wake-ups when there is nothing
    to do.

    When idle it also expires waits past their expiry (``runs.expire_waits``), so an
    approval nobody decided in time sends its run down the rejection path, and resumes
    parents whose child runs have finished (``runs.settle_children``; the worker that
    finishes a child does that at once, this catches a crash in between). It then sleeps
    until the first of: a wake-up from storage (a run became runnable: see
    :meth:`~tether.storage.base.Storage.wakeups`), the next timer falling due (a scheduled
    run, a wait's expiry, a lease running out, read from the database on the injected
    clock), or ``poll_s`` (the fallback when a wake-up is lost). A waiting run holds no
    worker: whichever worker is free when its time comes claims it.

    ``idle_tasks`` run whenever there is nothing to claim (the CLI's worker passes the
    housekeeping passes and webhook deliveries); each decides for itself whether work is
    due, so calling them often is cheap.

    Storage that cannot be reached (a restarting server, a lock held past the busy timeout,
    a full disk, a read-only file) does not stop the worker: it waits a backoff that grows
    up to :data:`MAX_BACKOFF_S` (or half the lease, if shorter), logs and counts the fault
    (``storage_faults``), and tries again. Other errors (a missing database, an outdated
    schema, a bug) still end it.
    """

    def __init__(
        self,
        executor: Executor,
        runs: Runs,
        *,
        poll_s: float = 0.5,
        wakeups: Wakeups | None = None,
        idle_tasks: Sequence[Callable[[], object]] = (),
    ) -> None:
        self.executor = executor
        self.runs = runs
        self.poll_s = poll_s
        self.wakeups = wakeups
        self.idle_tasks = tuple(idle_tasks)
        self.stop = threading.Event()
        self.storage_faults = 0
        """Times storage was unavailable to the worker's loop (claims and expiries)."""
        self.backoff = Backoff(max_s=min(MAX_BACKOFF_S, executor.lease.total_seconds() / 2))
        """Never longer than half a lease, so a run whose worker died is soon recovered."""

    def run(self, *, until_idle: bool = False, max_runs: int | None = None) -> int:
        """Execute runs until ``stop`` is set (or, with ``until_idle``, none is runnable).

        Returns how many claims were executed.
        """
        done = 0
        while not self.stop.is_set():
            try:
                run = self.executor.execute_next()
                if run is None and (self.runs.expire_waits() or self.runs.settle_children()):
                    continue
                if run is None:
                    for task in self.idle_tasks:
                        task()
                    if not until_idle:
                        self._idle()
                        continue
                elif run.parent_run_id and run.status.finished:
                    self.runs.settle_children()
            except StorageUnavailable as exc:
                self.storage_faults += 1
                delay = self.backoff.next_delay()
                log.warning(
                    "storage unavailable (%s: %s); retrying in %.2fs (fault %d)",
                    exc.code,
                    exc.message,
                    delay,
                    self.storage_faults,
                )
                self.stop.wait(delay)
                continue
            self.backoff.reset()
            if run is None:
                break
            done += 1
            log.info("run %s: %s", run.run_id, run.status.value)
            if max_runs is not None and done >= max_runs:
                break
        return done

    def _idle(self) -> None:
        """Sleep until woken, until the next timer is due, or ``poll_s``; wakes within
        :data:`STOP_CHECK_S` of ``stop`` being set."""
        storage = self.executor.storage
        with storage.system_transaction(write=False) as txn:
            due = txn.next_due()
        delay = self.poll_s
        if due is not None:
            until_due = (due - self.executor.clock.now()).total_seconds()
            if until_due > 0:
                delay = min(delay, until_due)
        deadline = time.monotonic() + delay
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self.wakeups is None:
                self.stop.wait(min(left, STOP_CHECK_S))
            elif self.wakeups.wait(min(left, STOP_CHECK_S)):
                return


STOP_CHECK_S = 0.25
"""The longest an idle worker sleeps before it checks whether it was told to stop."""


def run_workers(workers: Sequence[Worker], *, until_idle: bool = False) -> int:
    """Run several workers of one process, each on a thread of its own, until all stop;
    the claims they executed in all.

    They share the process's storage (a pool on PostgreSQL, a connection per thread on
    SQLite, where BEGIN IMMEDIATE serialises the claims of every process on the file).
    Python runs one thread's bytecode at a time: threads overlap the database round trips
    and the waits on effects, processes overlap computation as well.
    """
    if len(workers) == 1:
        return workers[0].run(until_idle=until_idle)
    done = [0] * len(workers)
    failures: list[BaseException] = []

    def work(index: int) -> None:
        try:
            done[index] = workers[index].run(until_idle=until_idle)
        except BaseException as exc:
            failures.append(exc)
            for worker in workers:
                worker.stop.set()

    threads = [
        threading.Thread(target=work, args=(i,), name=f"tether-worker-{i}", daemon=True)
        for i in range(len(workers))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return sum(done)
