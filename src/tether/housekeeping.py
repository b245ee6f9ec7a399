"""Housekeeping: each tenant's retention work, on a schedule, one worker at a time.

A pass over one tenant runs the memory retention cycle, thread retention, the
working-memory purge and run retention (``gc``), then writes one ``housekeeping.pass``
audit entry with the counts of each. Workers call :meth:`Housekeeping.run_due` when they
are idle; a tenant's pass is due ``TETHER_HOUSEKEEPING_INTERVAL_S`` after its last one.
A pass holds the tenant's housekeeping lease (a row in ``housekeeping_leases`` taken with a
conditional update), so two workers never run the same tenant's pass at once; a worker
that dies mid-pass leaves a lease that runs out after :data:`LEASE`, and the next worker
runs the pass again (every part of it is safe to repeat). ``tether housekeeping run``
runs a pass by hand, due or not.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict

from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict
from tether.memory.service import Memory
from tether.permissions import authorize
from tether.principals import SYSTEM_ACTOR, Principal, Role
from tether.redaction import get_logger
from tether.runs.retention import RunRetention
from tether.storage.base import Storage
from tether.threads.service import Threads
from tether.validation import guarded
from tether.working.service import WorkingMemory

log = get_logger("tether.housekeeping")

LEASE = timedelta(minutes=15)
"""How long a pass may hold a tenant's lease before another worker may take it over."""

CHECK_EVERY = timedelta(seconds=60)
"""How often a worker looks for tenants whose pass is due."""

GLOBAL_TENANT = "_global"
"""The reserved tenant of global memory: it has no runs, threads or sessions."""


class PassReport(BaseModel):
    """The counts of one tenant's housekeeping pass, as audited."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    memory: dict[str, int]
    threads: dict[str, int]
    working_purged: int
    runs: dict[str, int]


@guarded
class Housekeeping:
    """``app.housekeeping``: the scheduled retention passes of every tenant."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        audit: AuditLog,
        *,
        memory: Memory,
        threads: Threads,
        working: WorkingMemory,
        retention: RunRetention,
        interval: timedelta,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._audit = audit
        self._memory = memory
        self._threads = threads
        self._working = working
        self._retention = retention
        self.interval = interval
        self._next_check = clock.now()

    def run_due(self, *, owner: str) -> list[PassReport]:
        """Run the pass of every tenant that is due and whose lease is free.

        Looks at the tenants at most once per :data:`CHECK_EVERY` (or interval, if
        shorter), so a worker may call it on every idle poll.
        """
        now = self._clock.now()
        if now < self._next_check:
            return []
        self._next_check = now + min(CHECK_EVERY, self.interval)
        with self._storage.system_transaction(write=False) as txn:
            tenants = [t.tenant_id for t in txn.list_tenants() if t.tenant_id != GLOBAL_TENANT]
        reports = []
        for tenant in tenants:
            if self._acquire(tenant, owner, force=False):
                reports.append(self._pass(tenant, owner))
        return reports

    def run(self, principal: Principal, *, owner: str) -> PassReport:
        """Run the principal's tenant's pass now, due or not.

        Raises:
            Conflict: another worker is running the tenant's pass.
        """
        authorize(principal, "housekeeping.run")
        if not self._acquire(principal.tenant_id, owner, force=True):
            raise Conflict(
                f"a housekeeping pass of tenant {principal.tenant_id!r} is running elsewhere; "
                f"try again once it ends (its lease runs out within {LEASE})"
            )
        return self._pass(principal.tenant_id, owner, by=principal)

    def _acquire(self, tenant: str, owner: str, *, force: bool) -> bool:
        now = self._clock.now()
        with self._storage.transaction(tenant) as txn:
            return txn.acquire_housekeeping_lease(
                tenant, owner=owner, now=now, lease_expires_at=now + LEASE, force=force
            )

    def _pass(self, tenant: str, owner: str, *, by: Principal | None = None) -> PassReport:
        system = Principal(tenant, SYSTEM_ACTOR, frozenset({Role.ADMIN}))
        try:
            report = PassReport(
                tenant_id=tenant,
                memory=self._memory.retention_cycle(system),
                threads=self._threads.retention_cycle(system),
                working_purged=self._working.purge_expired(tenant_id=tenant),
                runs=_gc_counts(self._retention, system),
            )
        except BaseException:
            with self._storage.transaction(tenant) as txn:
                txn.release_housekeeping_lease(tenant, owner=owner)
            raise
        now = self._clock.now()
        with self._storage.transaction(tenant) as txn:
            if not txn.finish_housekeeping_lease(
                tenant, owner=owner, now=now, next_due_at=now + self.interval
            ):
                log.warning("housekeeping of %s: the lease ran out during the pass", tenant)
            self._audit.record_by_txn(
                txn,
                by or system,
                action="housekeeping.pass",
                target=f"tenant:{tenant}",
                details=report.model_dump(exclude={"tenant_id"}),
            )
        return report


def _gc_counts(retention: RunRetention, principal: Principal) -> dict[str, int]:
    report = retention.gc(principal)
    return {"compacted": report.compacted, "held": report.held, **report.deleted}
