"""What a webhook endpoint and a delivery are, as shown to operators."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class WebhookEvent(enum.StrEnum):
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_EXPIRING = "approval.expiring"
    RUN_STUCK = "run.stuck"
    RUN_FINISHED = "run.finished"
    RUN_CANCELLED = "run.cancelled"


class DeliveryStatus(enum.StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
    """Every attempt failed; ``tether webhooks retry`` queues it again."""
    REFUSED = "refused"
    """The URL left the allowlist (or the endpoint was removed) before it was sent."""


class Endpoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    endpoint_id: str
    url: str
    events: list[WebhookEvent]
    created_at: datetime
    created_by: str


class Delivery(BaseModel):
    """One event for one endpoint: its delivery id stays the same across retries."""

    model_config = ConfigDict(frozen=True)

    delivery_id: str
    endpoint_id: str
    event: WebhookEvent
    payload: dict[str, Any]
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
