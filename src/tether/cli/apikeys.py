"""``tether api-keys``: make, list and revoke the API keys of the HTTP API."""

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
    err_console,
    id_column,
    open_app,
    print_json,
    print_table,
    reporting,
)
from tether.clock import format_timestamp

api_keys_app = typer.Typer(
    help="API keys of the HTTP API: each acts as one principal of one tenant, with roles.",
    no_args_is_help=True,
)


@api_keys_app.command("create")
def create_key(
    principal_id: Annotated[str, typer.Argument(help="The principal the key acts as.")],
    tenant: TenantOption,
    actor: ActorOption,
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role",
            "-r",
            help="A role of the key (repeatable), each one the principal holds; default: "
            "all of its roles.",
        ),
    ] = None,
    name: Annotated[str, typer.Option(help="What the key is for (shown in listings).")] = "",
    expires_in_days: Annotated[
        int | None, typer.Option(help="The key stops working after this many days.")
    ] = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Make an API key (needs an admin, --as) and print it once: only its hash is kept."""
    with reporting(json_output), open_app(url) as app:
        made = app.api_keys.create(
            acting(app, tenant, actor),
            principal_id,
            role or None,
            name=name,
            expires_in_days=expires_in_days,
        )
        if json_output:
            print_json(made)
            return
        key = made.key
        err_console.print(
            f"API key {key.key_id} for {key.principal_id} in {key.tenant_id} "
            f"({', '.join(key.roles)}); it is shown only now, keep it secret:"
        )
        console.print(made.secret)


@api_keys_app.command("ls")
def list_keys(
    tenant: TenantOption,
    actor: ActorOption,
    include_revoked: Annotated[bool, typer.Option(help="Also list revoked keys.")] = False,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """List the tenant's API keys, never their secrets (needs an admin, --as)."""
    with reporting(json_output), open_app(url) as app:
        keys = app.api_keys.all(acting(app, tenant, actor), include_revoked=include_revoked)
        if json_output:
            print_json(keys)
            return
        table = Table(
            id_column("key id"), "principal", "roles", "name", "created", "expires", "revoked"
        )
        for key in keys:
            table.add_row(
                key.key_id,
                key.principal_id,
                ", ".join(key.roles),
                key.name,
                f"{format_timestamp(key.created_at)} by {key.created_by}",
                format_timestamp(key.expires_at) if key.expires_at else "never",
                f"{format_timestamp(key.revoked_at)} by {key.revoked_by}" if key.revoked_at else "",
            )
        print_table(table)


@api_keys_app.command("revoke")
def revoke_key(
    key_id: Annotated[str, typer.Argument(help="The key's id (see `tether api-keys ls`).")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Revoke an API key at once (needs an admin, --as): requests made with it are refused."""
    with reporting(json_output), open_app(url) as app:
        key = app.api_keys.revoke(acting(app, tenant, actor), key_id)
        if json_output:
            print_json(key)
            return
        console.print(f"revoked API key {key.key_id} of {key.principal_id}")
