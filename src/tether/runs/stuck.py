"""Stuck runs: runs that will not move without an operator, each with its cause.

One component decides what "stuck" means, so ``tether runs stuck``, the worker's
``run.stuck`` webhooks and any monitor agree. Each cause is one named query
(``stuck_*`` in ``storage/queries/runs.sql``) over the tenant's runs at the clock's now;
the thresholds below say how long past a due moment a run must be before it counts, so a
run that a live worker is about to pick up is not reported.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel

from tether.storage.base import Storage
from tether.storage.rows import StuckCutoffs
from tether.storage.stores import RunStore


class StuckCause(enum.StrEnum):
    NO_CHECKPOINT = "no_checkpoint"
    """Queued or running with no checkpoint within its workflow's ``checkpoint_sla``."""
    LEASE_EXPIRED = "lease_expired"
    """Running, its lease ran out, and no worker has reclaimed it."""
    WAIT_EXPIRED = "wait_expired"
    """An open question (interrupt) passed its expiry and nothing expired it."""
    APPROVAL_EXPIRED = "approval_expired"
    """An open approval request passed its expiry and nothing expired it."""
    RETRIES_EXHAUSTED = "retries_exhausted"
    """Failed after its node's retries were used up."""
    EFFECT_UNANSWERED = "effect_unanswered"
    """An external effect was started and its result never recorded."""
    REPEATED_TAKEOVERS = "repeated_takeovers"
    """Its workers died or stalled repeatedly: taken over at least N times."""
    STATUS_MISMATCH = "status_mismatch"
    """Its status and its queue columns (lease, resume time, open wait) disagree."""


SUGGESTED: Mapping[StuckCause, str] = {
    StuckCause.NO_CHECKPOINT: "tether runs inspect {run_id}",
    StuckCause.LEASE_EXPIRED: "tether worker --workflows <module:registry>",
    StuckCause.WAIT_EXPIRED: "tether worker --workflows <module:registry>",
    StuckCause.APPROVAL_EXPIRED: "tether worker --workflows <module:registry>",
    StuckCause.RETRIES_EXHAUSTED: "tether runs inspect {run_id}",
    StuckCause.EFFECT_UNANSWERED: "tether runs inspect {run_id}",
    StuckCause.REPEATED_TAKEOVERS: "tether runs cancel {run_id} --reason <why>",
    StuckCause.STATUS_MISMATCH: "tether runs cancel {run_id} --reason <why>",
}
"""What an operator runs first for each cause (``tether runs inspect`` for the details). An
expired wait can no longer be answered or decided: an idle worker expires it and the run
moves on (an expired question raises ``InterruptExpired`` in the node, an expired approval
takes the rejection path)."""


@dataclass(frozen=True)
class StuckThresholds:
    """How far past a due moment a run must be to count as stuck.

    ``grace`` applies to expired leases and expired waits: a live worker reclaims or
    expires them within a poll or two. ``effect_timeout``: how long an effect may go
    without a result. ``takeovers``: how many lease takeovers mean its workers keep dying.
    """

    grace: timedelta = timedelta(minutes=5)
    effect_timeout: timedelta = timedelta(minutes=15)
    takeovers: int = 3


class StuckRun(BaseModel):
    """One stuck run and one of its causes (a run stuck for two causes is listed twice)."""

    run_id: str
    workflow: str
    status: str
    cause: StuckCause
    since: datetime
    """Since when the cause has held (the last checkpoint, the lease's or wait's expiry,
    the effect's start, the last takeover, the last update)."""
    age_s: float
    suggested: str


def find_stuck(
    storage: Storage,
    tenant_id: str,
    now: datetime,
    thresholds: StuckThresholds | None,
    checkpoint_slas: Mapping[str, timedelta],
) -> list[StuckRun]:
    """:func:`find_stuck_txn` in a read transaction of its own."""
    with storage.transaction(tenant_id, write=False) as txn:
        return find_stuck_txn(
            txn,
            tenant_id,
            now=now,
            thresholds=thresholds or StuckThresholds(),
            checkpoint_slas=checkpoint_slas,
        )


def find_stuck_txn(
    txn: RunStore,
    tenant_id: str,
    *,
    now: datetime,
    thresholds: StuckThresholds,
    checkpoint_slas: Mapping[str, timedelta],
) -> list[StuckRun]:
    """The stuck runs of ``tenant_id`` at ``now``, longest stuck first."""
    cutoffs = StuckCutoffs(
        lease=now - thresholds.grace,
        wait=now - thresholds.grace,
        effect=now - thresholds.effect_timeout,
        takeovers=thresholds.takeovers,
        checkpoint_by_workflow={name: now - sla for name, sla in checkpoint_slas.items()},
    )
    found = [
        StuckRun(
            run_id=row.run_id,
            workflow=row.workflow,
            status=row.status,
            cause=StuckCause(row.cause),
            since=row.since,
            age_s=max(0.0, (now - row.since).total_seconds()),
            suggested=SUGGESTED[StuckCause(row.cause)].format(run_id=row.run_id),
        )
        for row in txn.find_stuck(tenant_id, cutoffs)
    ]
    return sorted(found, key=lambda stuck: (stuck.since, stuck.run_id, stuck.cause))
