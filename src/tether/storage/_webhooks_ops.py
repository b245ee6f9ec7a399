"""Typed storage operations of webhooks (allowlist, endpoints, deliveries, the scans
that find what to notify), written once over named queries."""

from __future__ import annotations

from datetime import datetime

from tether.runs.models import Run, Wait
from tether.storage._runs_ops import RunOps
from tether.storage._transaction import Row
from tether.storage.rows import WebhookDeliveryRow, WebhookEndpointRow


class WebhookOps(RunOps):
    def _endpoint(self, row: Row) -> WebhookEndpointRow:
        return WebhookEndpointRow(
            endpoint_id=row["endpoint_id"],
            url=row["url"],
            events_json=row["events"],
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
        )

    def _delivery(self, row: Row) -> WebhookDeliveryRow:
        return WebhookDeliveryRow(
            tenant_id=row["tenant_id"],
            delivery_id=row["delivery_id"],
            endpoint_id=row["endpoint_id"],
            event_key=row["event_key"],
            event=row["event"],
            payload_json=row["payload"],
            status=row["status"],
            attempts=int(row["attempts"]),
            next_attempt_at=self._ts_out(row["next_attempt_at"]),
            last_error=row["last_error"],
            created_at=self._ts_out(row["created_at"]),
            delivered_at=self._opt_ts_out(row["delivered_at"]),
        )

    def insert_webhook_prefix(self, tenant_id: str, prefix: str, *, at: datetime, by: str) -> None:
        self._fetch(
            "insert_webhook_prefix",
            {
                "tenant_id": tenant_id,
                "prefix": prefix,
                "created_at": self._ts_in(at),
                "created_by": by,
            },
        )

    def delete_webhook_prefix(self, tenant_id: str, prefix: str) -> bool:
        return bool(
            self._fetch("delete_webhook_prefix", {"tenant_id": tenant_id, "prefix": prefix})
        )

    def list_webhook_prefixes(self, tenant_id: str) -> list[str]:
        return [r["prefix"] for r in self._fetch("list_webhook_prefixes", {"tenant_id": tenant_id})]

    def insert_webhook_endpoint(self, tenant_id: str, row: WebhookEndpointRow) -> None:
        self._fetch(
            "insert_webhook_endpoint",
            {
                "tenant_id": tenant_id,
                "endpoint_id": row.endpoint_id,
                "url": row.url,
                "events": row.events_json,
                "created_at": self._ts_in(row.created_at),
                "created_by": row.created_by,
            },
        )

    def remove_webhook_endpoint(self, tenant_id: str, endpoint_id: str, *, at: datetime) -> bool:
        params = {"tenant_id": tenant_id, "endpoint_id": endpoint_id, "removed_at": self._ts_in(at)}
        return bool(self._fetch("remove_webhook_endpoint", params))

    def list_webhook_endpoints(self, tenant_id: str) -> list[WebhookEndpointRow]:
        rows = self._fetch("list_webhook_endpoints", {"tenant_id": tenant_id})
        return [self._endpoint(row) for row in rows]

    def get_webhook_endpoint(self, tenant_id: str, endpoint_id: str) -> WebhookEndpointRow | None:
        row = self._one("get_webhook_endpoint", tenant_id=tenant_id, endpoint_id=endpoint_id)
        return self._endpoint(row) if row else None

    def insert_webhook_delivery(
        self,
        tenant_id: str,
        *,
        delivery_id: str,
        endpoint_id: str,
        event_key: str,
        event: str,
        payload_json: str,
        at: datetime,
    ) -> bool:
        rows = self._fetch(
            "insert_webhook_delivery",
            {
                "tenant_id": tenant_id,
                "delivery_id": delivery_id,
                "endpoint_id": endpoint_id,
                "event_key": event_key,
                "event": event,
                "payload": payload_json,
                "next_attempt_at": self._ts_in(at),
                "created_at": self._ts_in(at),
            },
        )
        return bool(rows)

    def find_due_webhook_deliveries(self, *, now: datetime, limit: int) -> list[tuple[str, str]]:
        rows = self._fetch("find_due_webhook_deliveries", {"now": self._ts_in(now), "limit": limit})
        return [(row["tenant_id"], row["delivery_id"]) for row in rows]

    def get_webhook_delivery(self, tenant_id: str, delivery_id: str) -> WebhookDeliveryRow | None:
        row = self._one("get_webhook_delivery", tenant_id=tenant_id, delivery_id=delivery_id)
        return self._delivery(row) if row else None

    def update_webhook_delivery(self, row: WebhookDeliveryRow, *, expected_attempts: int) -> bool:
        rows = self._fetch(
            "update_webhook_delivery",
            {
                "tenant_id": row.tenant_id,
                "delivery_id": row.delivery_id,
                "status": row.status,
                "attempts": row.attempts,
                "next_attempt_at": self._ts_in(row.next_attempt_at),
                "last_error": row.last_error,
                "delivered_at": self._opt_ts_in(row.delivered_at),
                "expected_attempts": expected_attempts,
            },
        )
        return bool(rows)

    def list_webhook_deliveries(
        self, tenant_id: str, *, status: str | None, limit: int
    ) -> list[WebhookDeliveryRow]:
        rows = self._fetch(
            "list_webhook_deliveries",
            {"tenant_id": tenant_id, "status": status or "", "limit": limit},
        )
        return [self._delivery(row) for row in rows]

    def get_webhook_cursor(self, tenant_id: str, source: str) -> datetime | None:
        row = self._one("get_webhook_cursor", tenant_id=tenant_id, source=source)
        return self._ts_out(row["seen_at"]) if row else None

    def set_webhook_cursor(self, tenant_id: str, source: str, seen_at: datetime) -> None:
        self._fetch(
            "set_webhook_cursor",
            {"tenant_id": tenant_id, "source": source, "seen_at": self._ts_in(seen_at)},
        )

    def list_runs_finished_since(self, tenant_id: str, *, since: datetime, limit: int) -> list[Run]:
        params = {"tenant_id": tenant_id, "since": self._ts_in(since), "limit": limit}
        return [self._run(row) for row in self._fetch("list_runs_finished_since", params)]

    def list_approvals_since(self, tenant_id: str, *, since: datetime, limit: int) -> list[Wait]:
        params = {"tenant_id": tenant_id, "since": self._ts_in(since), "limit": limit}
        return [self._wait(row) for row in self._fetch("list_approvals_since", params)]

    def list_approvals_expiring(
        self, tenant_id: str, *, now: datetime, until: datetime, limit: int
    ) -> list[Wait]:
        params = {
            "tenant_id": tenant_id,
            "now": self._ts_in(now),
            "until": self._ts_in(until),
            "limit": limit,
        }
        return [self._wait(row) for row in self._fetch("list_approvals_expiring", params)]
