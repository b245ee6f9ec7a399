"""The heartbeat: keeps a claim's lease alive while a node or an effect runs.

A claim's lease is renewed by each of its writes, so a worker that commits often never
needs more. A node that computes for long, or an effect whose call outlasts the lease (a
slow API, a long tool call), would otherwise let another worker take the run over while the
call is in flight and send the effect again. One background thread per executor watches the
claim it is driving and renews the lease only when less than half of it is left: it adds no
write to a run that commits often.

If the renewal finds the lease taken over, or the lease runs out while storage cannot be
reached, the claim is marked lost and stops before its next durable write (and before an
effect's call).
"""

from __future__ import annotations

import threading
from datetime import timedelta

from tether.errors import TetherError
from tether.redaction import get_logger
from tether.runs.claim import Claim
from tether.storage.base import Storage

log = get_logger("tether.runs")


class Heartbeat:
    """Renews the lease of the one claim an executor is driving, from a daemon thread of
    the executor's own. Watched and unwatched from the executor's thread only.

    The thread looks at whatever claim is watched once per ``interval_s``; watching and
    unwatching only set that claim, without waking the thread, so a run's start and end
    cost no switch to another thread (an executor that claims run after run would
    otherwise wake it twice per run). Idle for a whole interval, it waits without waking
    until the next :meth:`watch`.
    """

    def __init__(self, storage: Storage, lease: timedelta) -> None:
        self.storage = storage
        self.lease = lease
        self.interval_s = max(lease.total_seconds() / 4, 0.01)
        self.renewals = 0
        """Renewals written (a run that commits often needs none)."""
        self._cond = threading.Condition()
        self._claim: Claim | None = None
        self._renewing = False
        self._idle = False
        self._thread: threading.Thread | None = None

    def watch(self, claim: Claim) -> None:
        """Keep ``claim``'s lease alive until :meth:`unwatch`."""
        with self._cond:
            self._claim = claim
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._beat, name="tether-heartbeat", daemon=True
                )
                self._thread.start()
            elif self._idle:
                self._cond.notify_all()

    def unwatch(self) -> None:
        """Stop renewing, and wait for a renewal under way: none may outlive the claim
        (or the storage, once the caller closes it)."""
        with self._cond:
            self._claim = None
            while self._renewing:
                self._cond.wait()

    def _beat(self) -> None:
        while True:
            with self._cond:
                if self._claim is None:
                    self._idle = True
                    while self._claim is None:
                        self._cond.wait()
                    self._idle = False
                self._cond.wait(self.interval_s)
                claim = self._claim
                if claim is None or claim.lost is not None:
                    continue
                self._renewing = True
            try:
                self.renew_if_at_risk(claim)
            except Exception:
                log.exception("run %s: the heartbeat failed", claim.run.run_id)
            finally:
                with self._cond:
                    self._renewing = False
                    self._cond.notify_all()

    def renew_if_at_risk(self, claim: Claim) -> None:
        """Renew ``claim``'s lease if less than half of it is left; mark it lost if another
        worker took it over, or if it ran out while storage could not be reached."""
        now = claim.clock.now()
        expires = claim.expires_at
        if expires - now > self.lease / 2:
            return
        run = claim.run
        new_expiry = now + self.lease
        try:
            with self.storage.transaction(run.tenant_id) as txn:
                held = txn.renew_lease(
                    run.tenant_id,
                    run.run_id,
                    owner=claim.owner,
                    epoch=run.lease_epoch,
                    lease_expires_at=new_expiry,
                )
        except TetherError as exc:
            if claim.clock.now() >= expires:
                claim.lose(f"the lease ran out while it could not be renewed ({exc.code})")
            log.warning("run %s: lease renewal failed (%s); retrying", run.run_id, exc.code)
            return
        if not held:
            claim.lose("another worker took the lease over")
            return
        self.renewals += 1
        claim.renewed(new_expiry)
