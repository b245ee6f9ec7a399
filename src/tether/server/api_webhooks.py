"""``/api/v1/webhooks``: the URL allowlist, the signing secret, endpoints, the delivery
log and its retries.

Each endpoint calls one operation of ``app.webhooks`` with the caller's principal. The
allowlist and the secret are an administrator's (``webhooks.manage``); endpoints and
retries an operator's (``webhooks.operate``); every role reads the log.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS, error_responses
from tether.webhooks.models import Delivery, DeliveryStatus, Endpoint, WebhookEvent

router = APIRouter(tags=["webhooks"], responses=COMMON_ERRORS)

Url = Annotated[str, Field(min_length=1, max_length=2000)]


class Prefix(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prefix: Url = Field(description="Webhooks may go to URLs that start with it.")


class NewEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: Url = Field(description="Where to POST the events: under an allowlisted prefix.")
    events: list[WebhookEvent] | None = Field(
        None, max_length=len(WebhookEvent), description="The events to send (default: all)."
    )


class Notification(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event: WebhookEvent
    subject: str = Field(min_length=1, max_length=200, description="What it is about (a run id).")
    data: dict[str, Any] = Field(default_factory=dict, description="The event's payload.")


class SigningSecret(BaseModel):
    secret: str = Field(description="Hex; receivers check HMAC-SHA256 signatures with it.")


class Queued(BaseModel):
    queued: int = Field(description="Deliveries queued (one per endpoint that wants it).")


@router.get("/webhooks/allowlist", summary="The webhook URL allowlist", response_model=list[str])
def allowlist(app: TetherApp, caller: Caller) -> list[str]:
    """The URL prefixes webhooks may go to; nothing else is ever called. Needs
    `webhooks.read` (every role)."""
    return app.webhooks.allowlist(caller)


@router.post("/webhooks/allowlist", summary="Allow a URL prefix", status_code=204)
def allow(body: Prefix, app: TetherApp, caller: Caller) -> None:
    """Allow webhooks to URLs under `prefix` (http or https). Needs `webhooks.manage`
    (admin)."""
    app.webhooks.allow(caller, body.prefix)


@router.delete("/webhooks/allowlist", summary="Remove a URL prefix", status_code=204)
def disallow(
    app: TetherApp,
    caller: Caller,
    prefix: Annotated[str, Query(min_length=1, max_length=2000, description="The prefix.")],
) -> None:
    """Take `prefix` off the allowlist: pending deliveries to URLs only it allowed are
    refused. A prefix not on the list is 404. Needs `webhooks.manage`."""
    app.webhooks.disallow(caller, prefix)


@router.get("/webhooks/secret", summary="The webhook signing secret", response_model=SigningSecret)
def secret(app: TetherApp, caller: Caller) -> SigningSecret:
    """The tenant's signing secret, for configuring a receiver: each delivery carries an
    HMAC-SHA256 of its timestamp and body under it. Needs `webhooks.manage` (admin)."""
    return SigningSecret(secret=app.webhooks.signing_secret(caller))


@router.get("/webhooks/endpoints", summary="Webhook endpoints", response_model=list[Endpoint])
def endpoints(app: TetherApp, caller: Caller) -> list[Endpoint]:
    """Where the tenant's events go, and which events each endpoint wants. Needs
    `webhooks.read`."""
    return app.webhooks.endpoints(caller)


@router.post(
    "/webhooks/endpoints",
    summary="Add a webhook endpoint",
    status_code=201,
    response_model=Endpoint,
)
def add_endpoint(body: NewEndpoint, app: TetherApp, caller: Caller) -> Endpoint:
    """Send events to `url`, which must be under an allowlisted prefix (else 403). Needs
    `webhooks.operate` (operator, admin)."""
    return app.webhooks.add_endpoint(caller, body.url, events=body.events)


@router.delete(
    "/webhooks/endpoints/{endpoint_id}", summary="Remove a webhook endpoint", status_code=204
)
def remove_endpoint(endpoint_id: str, app: TetherApp, caller: Caller) -> None:
    """Stop sending to the endpoint; its pending deliveries are refused. Needs
    `webhooks.operate`."""
    app.webhooks.remove_endpoint(caller, endpoint_id)


@router.get("/webhooks/deliveries", summary="The delivery log", response_model=list[Delivery])
def deliveries(
    app: TetherApp,
    caller: Caller,
    status: Annotated[
        DeliveryStatus | None, Query(description="Only deliveries in this status.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Most deliveries to list.")] = 100,
) -> list[Delivery]:
    """Every delivery, newest first: its event, endpoint, status, attempts, next attempt
    and last error. Needs `webhooks.read`."""
    return app.webhooks.deliveries(caller, status=status, limit=limit)


@router.post(
    "/webhooks/deliveries/{delivery_id}/retry",
    summary="Retry a delivery",
    response_model=Delivery,
    responses=error_responses(409),
)
def retry(delivery_id: str, app: TetherApp, caller: Caller) -> Delivery:
    """Queue a failed or refused delivery again, now, under the same delivery id (a
    receiver sees it once per id). A pending or delivered one is a conflict. Needs
    `webhooks.operate`."""
    return app.webhooks.retry(caller, delivery_id)


@router.post("/webhooks/notify", summary="Queue a notification", response_model=Queued)
def notify(body: Notification, app: TetherApp, caller: Caller) -> Queued:
    """Queue `event` about `subject` for every endpoint that wants it, once per subject
    and event (a second call for the same pair queues nothing). Needs
    `webhooks.operate`."""
    return Queued(queued=app.webhooks.notify(caller, body.event, body.subject, body.data))
