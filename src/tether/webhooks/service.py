"""``app.webhooks``: the allowlist, endpoints, what to notify, the delivery log.

Events are found by scanning, not by hooks in the engine: finished and cancelled runs
(by their last change), approval requests (by creation) and open approvals about to
expire. Each event gets one delivery per subscribed endpoint, keyed by the event and its
subject, so a scan that sees it again queues nothing new and the receiver sees one
delivery id per event. ``run.stuck`` is queued by whoever finds a stuck run
(:meth:`Webhooks.notify`), and by the workers' idle pass (:meth:`Webhooks.notify_stuck`),
once per run and cause. Sending is in :mod:`tether.webhooks.delivery`.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock, format_timestamp
from tether.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from tether.ids import IdSource, parse_id
from tether.keys import Keyring
from tether.permissions import authorize
from tether.principals import Principal
from tether.runs.models import Run, RunStatus, Wait
from tether.runs.stuck import StuckRun
from tether.storage.base import Storage, Transaction
from tether.storage.rows import WebhookDeliveryRow, WebhookEndpointRow
from tether.validation import guarded
from tether.webhooks.allowlist import allowed, parse_url
from tether.webhooks.models import Delivery, DeliveryStatus, Endpoint, WebhookEvent

SIGNING_PURPOSE = "webhook-signing"
"""The purpose label of the key each tenant's signing secret derives from."""

_SCAN_LIMIT = 500


@guarded
class Webhooks:
    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        audit: AuditLog,
        keyring: Keyring,
        *,
        expiring_within: timedelta,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._audit = audit
        self._key = keyring.purpose_key(SIGNING_PURPOSE)
        self.expiring_within = expiring_within

    def secret_for(self, tenant_id: str) -> bytes:
        """The tenant's signing secret (derived, never stored)."""
        return hmac.new(self._key, tenant_id.encode(), hashlib.sha256).digest()

    def signing_secret(self, principal: Principal) -> str:
        """The tenant's signing secret, hex, for configuring a receiver (administrator)."""
        authorize(principal, "webhooks.signing_secret")
        return self.secret_for(principal.tenant_id).hex()

    # -- the allowlist and endpoints -------------------------------------------------------

    def allow(self, principal: Principal, prefix: str) -> None:
        """Allow webhooks to URLs under ``prefix`` (administrator)."""
        authorize(principal, "webhooks.allow")
        parse_url(prefix, "the allowlist prefix")
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.insert_webhook_prefix(
                principal.tenant_id, prefix, at=self._clock.now(), by=principal.principal_id
            )
            self._audit.record_by_txn(
                txn, principal, action="webhook.allowed", target=f"url:{prefix}"
            )

    def disallow(self, principal: Principal, prefix: str) -> None:
        """Remove ``prefix``: pending deliveries to URLs only it allowed are refused."""
        authorize(principal, "webhooks.disallow")
        with self._storage.transaction(principal.tenant_id) as txn:
            if not txn.delete_webhook_prefix(principal.tenant_id, prefix):
                raise NotFound(f"{prefix!r} is not on the allowlist")
            self._audit.record_by_txn(
                txn, principal, action="webhook.disallowed", target=f"url:{prefix}"
            )

    def allowlist(self, principal: Principal) -> list[str]:
        authorize(principal, "webhooks.allowlist")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return txn.list_webhook_prefixes(principal.tenant_id)

    def add_endpoint(
        self, principal: Principal, url: str, *, events: list[WebhookEvent] | None = None
    ) -> Endpoint:
        """Send ``events`` (default: all) to ``url``, which must be on the allowlist.

        Raises:
            PermissionDenied: ``url`` is not under an allowlisted prefix.
        """
        authorize(principal, "webhooks.add_endpoint")
        parse_url(url)
        chosen = sorted({WebhookEvent(e) for e in events} if events else set(WebhookEvent))
        if not chosen:
            raise InvalidInput("name at least one event")
        row = WebhookEndpointRow(
            endpoint_id=str(self._ids.new_id()),
            url=url,
            events_json=canonical.dumps([e.value for e in chosen]),
            created_at=self._clock.now(),
            created_by=principal.principal_id,
        )
        with self._storage.transaction(principal.tenant_id) as txn:
            if not allowed(url, txn.list_webhook_prefixes(principal.tenant_id)):
                raise _refused(url)
            txn.insert_webhook_endpoint(principal.tenant_id, row)
            self._audit.record_by_txn(
                txn,
                principal,
                action="webhook.endpoint_added",
                target=f"webhook:{row.endpoint_id}",
                details={"url": url, "events": [e.value for e in chosen]},
            )
        return _endpoint(row)

    def remove_endpoint(self, principal: Principal, endpoint_id: str) -> None:
        authorize(principal, "webhooks.remove_endpoint")
        parse_id(endpoint_id, what="endpoint id")
        with self._storage.transaction(principal.tenant_id) as txn:
            if not txn.remove_webhook_endpoint(
                principal.tenant_id, endpoint_id, at=self._clock.now()
            ):
                raise NotFound(f"no webhook endpoint {endpoint_id}")
            self._audit.record_by_txn(
                txn, principal, action="webhook.endpoint_removed", target=f"webhook:{endpoint_id}"
            )

    def endpoints(self, principal: Principal) -> list[Endpoint]:
        authorize(principal, "webhooks.endpoints")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return [_endpoint(row) for row in txn.list_webhook_endpoints(principal.tenant_id)]

    # -- the delivery log ------------------------------------------------------------------

    def deliveries(
        self, principal: Principal, *, status: DeliveryStatus | None = None, limit: int = 100
    ) -> list[Delivery]:
        """The delivery log, newest first."""
        authorize(principal, "webhooks.deliveries")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            rows = txn.list_webhook_deliveries(
                principal.tenant_id,
                status=DeliveryStatus(status).value if status else None,
                limit=limit,
            )
        return [to_delivery(row) for row in rows]

    def retry(self, principal: Principal, delivery_id: str) -> Delivery:
        """Queue a failed or refused delivery again, now, under the same delivery id."""
        authorize(principal, "webhooks.retry")
        parse_id(delivery_id, what="delivery id")
        with self._storage.transaction(principal.tenant_id) as txn:
            row = txn.get_webhook_delivery(principal.tenant_id, delivery_id)
            if row is None:
                raise NotFound(f"no webhook delivery {delivery_id}")
            if row.status in (DeliveryStatus.PENDING, DeliveryStatus.DELIVERED):
                raise Conflict(f"delivery {delivery_id} is {row.status}; nothing to retry")
            again = replace(
                row, status=DeliveryStatus.PENDING.value, next_attempt_at=self._clock.now()
            )
            if not txn.update_webhook_delivery(again, expected_attempts=row.attempts):
                raise Conflict(f"delivery {delivery_id} changed concurrently; try again")
            self._audit.record_by_txn(
                txn,
                principal,
                action="webhook.retried",
                target=f"delivery:{delivery_id}",
                details={"attempts": row.attempts},
            )
        return to_delivery(again)

    # -- what to notify --------------------------------------------------------------------

    def notify(
        self, principal: Principal, event: WebhookEvent, subject: str, data: Mapping[str, Any]
    ) -> int:
        """Queue ``event`` about ``subject`` (e.g. ``run.stuck`` for a run id) for every
        endpoint that wants it, once per ``subject`` and event; how many were queued."""
        authorize(principal, "webhooks.notify")
        with self._storage.transaction(principal.tenant_id) as txn:
            return self._enqueue_txn(
                txn, principal.tenant_id, WebhookEvent(event), f"{event}:{subject}", dict(data)
            )

    def notify_stuck(self, tenant_id: str, find: Callable[[], Sequence[StuckRun]]) -> int:
        """Queue ``run.stuck`` once per run and cause that ``find`` reports, for the
        endpoints of ``tenant_id`` that want it (``find`` runs only if one does); how many
        deliveries were queued."""
        with self._storage.transaction(tenant_id, write=False) as txn:
            endpoints = txn.list_webhook_endpoints(tenant_id)
        event = WebhookEvent.RUN_STUCK
        if not any(event.value in canonical.loads(e.events_json) for e in endpoints):
            return 0
        found = find()
        with self._storage.transaction(tenant_id) as txn:
            return sum(
                self._enqueue_txn(
                    txn,
                    tenant_id,
                    event,
                    f"{event}:{stuck.run_id}:{stuck.cause}",
                    stuck.model_dump(mode="json"),
                )
                for stuck in found
            )

    def scan(self, tenant_id: str) -> int:
        """Queue the events that happened in ``tenant_id`` since the last scan; how many
        deliveries were queued. The first scan only starts the clock."""
        now = self._clock.now()
        queued = 0
        with self._storage.transaction(tenant_id, write=False) as txn:
            if not txn.list_webhook_endpoints(tenant_id):
                return 0
        with self._storage.transaction(tenant_id) as txn:
            since = txn.get_webhook_cursor(tenant_id, "runs")
            if since is not None:
                runs = txn.list_runs_finished_since(tenant_id, since=since, limit=_SCAN_LIMIT)
                for run in runs:
                    queued += self._run_event_txn(txn, run)
                since = max([since, *(run.updated_at for run in runs)])
            txn.set_webhook_cursor(tenant_id, "runs", since or now)
            since = txn.get_webhook_cursor(tenant_id, "approvals")
            if since is not None:
                waits = txn.list_approvals_since(tenant_id, since=since, limit=_SCAN_LIMIT)
                for wait in waits:
                    queued += self._enqueue_txn(
                        txn,
                        tenant_id,
                        WebhookEvent.APPROVAL_REQUESTED,
                        f"approval.requested:{wait.wait_id}",
                        _approval_data(wait),
                    )
                since = max([since, *(wait.created_at for wait in waits)])
            txn.set_webhook_cursor(tenant_id, "approvals", since or now)
            expiring = txn.list_approvals_expiring(
                tenant_id, now=now, until=now + self.expiring_within, limit=_SCAN_LIMIT
            )
            for wait in expiring:
                queued += self._enqueue_txn(
                    txn,
                    tenant_id,
                    WebhookEvent.APPROVAL_EXPIRING,
                    f"approval.expiring:{wait.wait_id}",
                    _approval_data(wait),
                )
        return queued

    def _run_event_txn(self, txn: Transaction, run: Run) -> int:
        data: dict[str, Any] = {
            "run_id": run.run_id,
            "workflow": f"{run.workflow}@{run.workflow_version}",
            "status": run.status.value,
            "finished_at": format_timestamp(run.updated_at),
        }
        if run.status is RunStatus.CANCELLED:
            event = WebhookEvent.RUN_CANCELLED
            cancelled = [
                e for e in txn.list_events(run.tenant_id, run.run_id) if e.type == "run.cancelled"
            ]
            data["reason"] = cancelled[-1].data.get("reason", "") if cancelled else ""
        else:
            event = WebhookEvent.RUN_FINISHED
        key = f"{event}:{run.run_id}:{format_timestamp(run.updated_at)}"
        return self._enqueue_txn(txn, run.tenant_id, event, key, data)

    def _enqueue_txn(
        self,
        txn: Transaction,
        tenant_id: str,
        event: WebhookEvent,
        key: str,
        data: dict[str, Any],
    ) -> int:
        now = self._clock.now()
        queued = 0
        for endpoint in txn.list_webhook_endpoints(tenant_id):
            if event.value not in canonical.loads(endpoint.events_json):
                continue
            delivery_id = str(self._ids.new_id())
            payload = {
                "delivery_id": delivery_id,
                "event": event.value,
                "tenant_id": tenant_id,
                "occurred_at": format_timestamp(now),
                "data": data,
            }
            queued += txn.insert_webhook_delivery(
                tenant_id,
                delivery_id=delivery_id,
                endpoint_id=endpoint.endpoint_id,
                event_key=key,
                event=event.value,
                payload_json=canonical.dumps(payload),
                at=now,
            )
        return queued


def _approval_data(wait: Wait) -> dict[str, Any]:
    return {
        "run_id": wait.run_id,
        "approval_id": wait.wait_id,
        "approver_role": wait.approver_role,
        "expires_at": format_timestamp(wait.expires_at) if wait.expires_at else None,
    }


def _refused(url: str) -> PermissionDenied:
    return PermissionDenied(
        f"{url} is not on this tenant's webhook allowlist; an administrator adds its prefix "
        "with `tether webhooks allow`"
    )


def _endpoint(row: WebhookEndpointRow) -> Endpoint:
    return Endpoint(
        endpoint_id=row.endpoint_id,
        url=row.url,
        events=[WebhookEvent(e) for e in canonical.loads(row.events_json)],
        created_at=row.created_at,
        created_by=row.created_by,
    )


def to_delivery(row: WebhookDeliveryRow) -> Delivery:
    return Delivery(
        delivery_id=row.delivery_id,
        endpoint_id=row.endpoint_id,
        event=WebhookEvent(row.event),
        payload=canonical.loads(row.payload_json),
        status=DeliveryStatus(row.status),
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        created_at=row.created_at,
        delivered_at=row.delivered_at,
    )
