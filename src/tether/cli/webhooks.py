"""``tether webhooks``: the URL allowlist, endpoints, the delivery log, retries."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from tether.cli._common import (
    ActorOption,
    JsonOption,
    TenantOption,
    UrlOption,
    acting,
    console,
    id_column,
    open_app,
    print_json,
    print_table,
    reporting,
)
from tether.clock import format_timestamp
from tether.webhooks.models import DeliveryStatus, WebhookEvent

webhooks_app = typer.Typer(
    help="Signed webhooks: allowlist, endpoints, delivery log, retries.", no_args_is_help=True
)

Prefix = Annotated[str, typer.Argument(help="URL prefix, e.g. https://hooks.example.com/tether/")]


@webhooks_app.command("allow")
def allow(prefix: Prefix, tenant: TenantOption, actor: ActorOption, url: UrlOption = None) -> None:
    """Put a URL prefix on the tenant's allowlist (administrator)."""
    with reporting(), open_app(url) as app:
        app.webhooks.allow(acting(app, tenant, actor), prefix)
        console.print(f"allowed: {prefix}")


@webhooks_app.command("disallow")
def disallow(
    prefix: Prefix, tenant: TenantOption, actor: ActorOption, url: UrlOption = None
) -> None:
    """Take a prefix off the allowlist; pending deliveries under it are refused."""
    with reporting(), open_app(url) as app:
        app.webhooks.disallow(acting(app, tenant, actor), prefix)
        console.print(f"disallowed: {prefix}")


@webhooks_app.command("add")
def add(
    endpoint_url: Annotated[str, typer.Argument(help="Where to POST (must be allowlisted).")],
    tenant: TenantOption,
    actor: ActorOption,
    event: Annotated[
        list[WebhookEvent] | None,
        typer.Option("--event", help="An event to send (repeat it); default: every event."),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Send events to a URL on the allowlist (operator)."""
    with reporting(), open_app(url) as app:
        endpoint = app.webhooks.add_endpoint(acting(app, tenant, actor), endpoint_url, events=event)
        console.print(f"endpoint {endpoint.endpoint_id}: {', '.join(endpoint.events)}")


@webhooks_app.command("rm")
def remove(
    endpoint_id: Annotated[str, typer.Argument(help="Endpoint id (see `webhooks endpoints`).")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
) -> None:
    """Stop sending to an endpoint."""
    with reporting(), open_app(url) as app:
        app.webhooks.remove_endpoint(acting(app, tenant, actor), endpoint_id)
        console.print(f"endpoint {endpoint_id} removed")


@webhooks_app.command("endpoints")
def endpoints(
    tenant: TenantOption, actor: ActorOption, url: UrlOption = None, json_output: JsonOption = False
) -> None:
    """The allowlist and the endpoints."""
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        prefixes = app.webhooks.allowlist(principal)
        found = app.webhooks.endpoints(principal)
        if json_output:
            print_json({"allowlist": prefixes, "endpoints": found})
            return
        for prefix in prefixes:
            console.print(f"allowed: {prefix}")
        table = Table(id_column("endpoint"), "url", "events")
        for e in found:
            table.add_row(e.endpoint_id, e.url, ", ".join(e.events))
        print_table(table)


@webhooks_app.command("ls")
def list_deliveries(
    tenant: TenantOption,
    actor: ActorOption,
    status: Annotated[
        DeliveryStatus | None, typer.Option(help="Only deliveries in this status.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=10000, help="Most deliveries to show.")] = 50,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """The delivery log, newest first."""
    with reporting(json_output), open_app(url) as app:
        found = app.webhooks.deliveries(acting(app, tenant, actor), status=status, limit=limit)
        if json_output:
            print_json(found)
            return
        table = Table(
            id_column("delivery"), "event", "status", "attempts", "next attempt", "last error"
        )
        for d in found:
            table.add_row(
                d.delivery_id,
                d.event.value,
                d.status.value,
                str(d.attempts),
                format_timestamp(d.next_attempt_at) if d.status == "pending" else "-",
                d.last_error or "-",
            )
        print_table(table)


@webhooks_app.command("retry")
def retry(
    delivery_id: Annotated[str, typer.Argument(help="Delivery id (see `webhooks ls`).")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
) -> None:
    """Queue a failed or refused delivery again now, under the same delivery id."""
    with reporting(), open_app(url) as app:
        again = app.webhooks.retry(acting(app, tenant, actor), delivery_id)
        console.print(f"delivery {again.delivery_id}: {again.status.value}")


@webhooks_app.command("secret")
def secret(tenant: TenantOption, actor: ActorOption, url: UrlOption = None) -> None:
    """Print the tenant's signing secret (hex) for the receiver (administrator)."""
    with reporting(), open_app(url) as app:
        console.print(app.webhooks.signing_secret(acting(app, tenant, actor)))
