"""What the monitors of a deployment watch: database-wide figures and each worker's counts.

The database-wide figures (:func:`read_figures`) are the same whichever process reads
them, so one component computes them, from one system transaction. Each worker counts what
only it sees (:func:`worker_counts`). :mod:`tether.runs.prometheus` exposes both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from tether.clock import Clock
from tether.runs.worker import Worker
from tether.storage.base import Storage
from tether.storage.rows import RunFigures

EXPIRING_WITHIN = timedelta(hours=1)
"""An open approval counts as expiring when it expires within this."""


def read_figures(
    storage: Storage, clock: Clock, *, expiring_within: timedelta = EXPIRING_WITHIN
) -> RunFigures:
    """Runs by status, the oldest running and longest waiting run, the queue's depth,
    approvals open and expiring, failed runs by node: every tenant together."""
    now = clock.now()
    with storage.system_transaction(write=False) as txn:
        return txn.run_figures(now=now, expiring_by=now + expiring_within)


@dataclass(frozen=True)
class WorkerCounts:
    """What one worker did since it started."""

    owner: str
    claims: int
    lease_takeovers: int
    heartbeats: int
    storage_retries: int
    retries: int


def worker_counts(workers: Sequence[Worker]) -> list[WorkerCounts]:
    """The counts of each worker: claims won, leases taken over from a dead or stalled
    worker, heartbeat renewals, storage faults survived (in the loop and in claims), and
    node retries scheduled."""
    return [
        WorkerCounts(
            owner=worker.executor.owner,
            claims=worker.executor.claims,
            lease_takeovers=worker.executor.takeovers,
            heartbeats=worker.executor.heartbeat.renewals,
            storage_retries=worker.storage_faults + worker.executor.storage_faults,
            retries=worker.executor.retries,
        )
        for worker in workers
    ]
