"""Sending webhook deliveries: signed POSTs, retried with exponential backoff.

A due delivery is first claimed (its attempt count goes up and its next attempt moves
:data:`CLAIM` ahead, in one guarded update), so two workers never send it at once; then
it is sent outside any transaction, and the outcome is written back. A 2xx answer
delivers it; anything else (another status, a refused connection, a timeout) schedules
the next attempt ``BACKOFF * 2**(attempts - 1)`` later, up to :data:`MAX_BACKOFF`, until
:data:`MAX_ATTEMPTS` have failed. A URL no longer on the allowlist is never sent to.
Error texts name the status or the network error, never a header or the secret.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from functools import partial

from tether.clock import Clock
from tether.redaction import get_logger, redact
from tether.runs.stuck import StuckRun
from tether.storage.base import Storage
from tether.storage.rows import WebhookDeliveryRow
from tether.webhooks.allowlist import allowed
from tether.webhooks.models import DeliveryStatus
from tether.webhooks.service import Webhooks
from tether.webhooks.signing import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign,
)

log = get_logger("tether.webhooks")

BACKOFF = timedelta(seconds=30)
MAX_BACKOFF = timedelta(hours=1)
MAX_ATTEMPTS = 8
CLAIM = timedelta(minutes=2)
"""How long a claimed delivery is left to its sender before another worker may send it."""
TIMEOUT_S = 5.0
BUDGET_S = 2.0
"""How long one :meth:`Dispatcher.run_due` keeps sending before it hands the worker back
(a receiver that hangs costs the worker at most this plus one request's timeout)."""
SCAN_EVERY = timedelta(seconds=10)
"""How often :meth:`Dispatcher.run_due` scans the tenants for new events."""
STUCK_SCAN_EVERY = timedelta(minutes=1)
"""How often :meth:`Dispatcher.scan_stuck` looks for stuck runs."""


class Dispatcher:
    """Sends due deliveries of every tenant (a worker's idle task, or by hand)."""

    def __init__(
        self, storage: Storage, clock: Clock, webhooks: Webhooks, *, timeout_s: float = TIMEOUT_S
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._webhooks = webhooks
        self.timeout_s = timeout_s
        self._next_scan = clock.now()
        self._next_stuck_scan = clock.now()

    def run_due(self, *, limit: int = 20) -> int:
        """Scan every tenant for new events (at most every :data:`SCAN_EVERY`), then send
        what is due; how many deliveries were attempted."""
        now = self._clock.now()
        if now >= self._next_scan:
            self._next_scan = now + SCAN_EVERY
            with self._storage.system_transaction(write=False) as txn:
                tenants = [t.tenant_id for t in txn.list_tenants()]
            for tenant in tenants:
                self._webhooks.scan(tenant)
        return self.send_due(limit=limit, budget_s=BUDGET_S)

    def scan_stuck(self, find: Callable[[str], Sequence[StuckRun]]) -> int:
        """Queue ``run.stuck`` for the stuck runs ``find`` reports in each tenant (at most
        every :data:`STUCK_SCAN_EVERY`); how many deliveries were queued."""
        now = self._clock.now()
        if now < self._next_stuck_scan:
            return 0
        self._next_stuck_scan = now + STUCK_SCAN_EVERY
        with self._storage.system_transaction(write=False) as txn:
            tenants = [t.tenant_id for t in txn.list_tenants()]
        return sum(self._webhooks.notify_stuck(tenant, partial(find, tenant)) for tenant in tenants)

    def send_due(self, *, limit: int = 50, budget_s: float | None = None) -> int:
        """Send up to ``limit`` due deliveries (stopping after ``budget_s`` seconds of
        sending, if given); how many were attempted."""
        with self._storage.system_transaction(write=False) as txn:
            due = txn.find_due_webhook_deliveries(now=self._clock.now(), limit=limit)
        attempted = 0
        started = time.monotonic()
        for tenant_id, delivery_id in due:
            if budget_s is not None and time.monotonic() - started > budget_s:
                break
            claimed = self._claim(tenant_id, delivery_id)
            if claimed is None:
                continue
            row, url = claimed
            attempted += 1
            error = self._post(url, row) if url else "the URL is no longer on the allowlist"
            self._record(row, error, refused=url is None)
        return attempted

    def _claim(
        self, tenant_id: str, delivery_id: str
    ) -> tuple[WebhookDeliveryRow, str | None] | None:
        now = self._clock.now()
        with self._storage.transaction(tenant_id) as txn:
            row = txn.get_webhook_delivery(tenant_id, delivery_id)
            if row is None or row.status != DeliveryStatus.PENDING or row.next_attempt_at > now:
                return None
            endpoint = txn.get_webhook_endpoint(tenant_id, row.endpoint_id)
            ok = endpoint is not None and allowed(
                endpoint.url, txn.list_webhook_prefixes(tenant_id)
            )
            claimed = replace(row, attempts=row.attempts + 1, next_attempt_at=now + CLAIM)
            if not txn.update_webhook_delivery(claimed, expected_attempts=row.attempts):
                return None
        return claimed, endpoint.url if ok and endpoint is not None else None

    def _post(self, url: str, row: WebhookDeliveryRow) -> str | None:
        """Send one attempt; ``None`` if the receiver took it, else what went wrong."""
        body = row.payload_json.encode()
        stamp = int(self._clock.now().timestamp())
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "tether-webhooks",
                DELIVERY_HEADER: row.delivery_id,
                EVENT_HEADER: row.event,
                TIMESTAMP_HEADER: str(stamp),
                SIGNATURE_HEADER: sign(self._webhooks.secret_for(row.tenant_id), stamp, body),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            return f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return redact(f"not delivered: {type(reason).__name__}: {reason}")[:300]
        return None if 200 <= status < 300 else f"HTTP {status}"

    def _record(self, row: WebhookDeliveryRow, error: str | None, *, refused: bool) -> None:
        now = self._clock.now()
        if error is None:
            done = replace(
                row, status=DeliveryStatus.DELIVERED.value, delivered_at=now, last_error=None
            )
        elif refused:
            done = replace(row, status=DeliveryStatus.REFUSED.value, last_error=error)
        elif row.attempts >= MAX_ATTEMPTS:
            done = replace(row, status=DeliveryStatus.FAILED.value, last_error=error)
        else:
            wait = min(MAX_BACKOFF, BACKOFF * 2 ** (row.attempts - 1))
            done = replace(row, next_attempt_at=now + wait, last_error=error)
        with self._storage.transaction(row.tenant_id) as txn:
            if not txn.update_webhook_delivery(done, expected_attempts=row.attempts):
                log.warning("webhook delivery %s changed while it was sent", row.delivery_id)
        if error is not None:
            log.info("webhook delivery %s: %s", row.delivery_id, error)
