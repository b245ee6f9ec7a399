"""``tether tenants`` and ``tether principals``."""

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

tenants_app = typer.Typer(help="Create and list tenants.", no_args_is_help=True)
principals_app = typer.Typer(
    help="Grant roles to principals inside a tenant.", no_args_is_help=True
)
platform_app = typer.Typer(
    help="Platform administrators: the only principals that write global memory.",
    no_args_is_help=True,
)


@tenants_app.command("create")
def create_tenant(
    tenant_id: Annotated[str, typer.Argument(help="New tenant id (lowercase slug).")],
    name: Annotated[str | None, typer.Option(help="Display name (default: the id).")] = None,
    admin: Annotated[
        str | None, typer.Option(help="Also create this principal with the admin role.")
    ] = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Register a tenant; give it a first admin with --admin."""
    with reporting(json_output), open_app(url) as app:
        tenant = app.tenants.create(tenant_id, name=name, admin=admin)
        if json_output:
            print_json(tenant)
        else:
            console.print(
                f"created tenant {tenant.tenant_id}" + (f" with admin {admin}" if admin else "")
            )


@tenants_app.command("ls")
def list_tenants(url: UrlOption = None, json_output: JsonOption = False) -> None:
    """List every tenant with its audit trail length."""
    with reporting(json_output), open_app(url) as app:
        tenants = app.tenants.all()
        if json_output:
            print_json(tenants)
            return
        table = Table(id_column("tenant"), "name", "created", "audit entries")
        for tenant in tenants:
            table.add_row(
                tenant.tenant_id,
                tenant.name,
                format_timestamp(tenant.created_at),
                str(tenant.audit_entries),
            )
        print_table(table)


@principals_app.command("add")
def add_principal(
    principal_id: Annotated[str, typer.Argument(help="Principal id to create or update.")],
    role: Annotated[
        list[str],
        typer.Option(
            "--role",
            "-r",
            help="Role to grant (repeatable): admin, operator, approver, agent, viewer.",
        ),
    ],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Create a principal or replace its roles. Needs an admin (--as)."""
    with reporting(json_output), open_app(url) as app:
        record = app.tenants.grant(acting(app, tenant, actor), principal_id, role)
        if json_output:
            print_json(record)
        else:
            roles = ", ".join(record.roles)
            console.print(f"{record.principal_id} in {record.tenant_id}: {roles}")


@principals_app.command("ls")
def list_principals(
    tenant: TenantOption, actor: ActorOption, url: UrlOption = None, json_output: JsonOption = False
) -> None:
    """List the principals of a tenant and their roles. Needs an admin or operator (--as)."""
    with reporting(json_output), open_app(url) as app:
        records = app.tenants.principals(acting(app, tenant, actor))
        if json_output:
            print_json(records)
            return
        table = Table(id_column("principal"), "roles", "updated", "by")
        for record in records:
            table.add_row(
                record.principal_id,
                ", ".join(record.roles),
                format_timestamp(record.updated_at),
                record.updated_by,
            )
        print_table(table)


@platform_app.command("add-admin")
def add_platform_admin(
    principal_id: Annotated[str, typer.Argument(help="Principal id of the new platform admin.")],
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Make a platform administrator (setup: needs the database and its key, no --as).

    Platform administrators are the admins of the reserved tenant _global; they alone
    write (and approve) global memory, which every tenant reads. Act as one with
    `--tenant _global --as ID`.
    """
    with reporting(json_output), open_app(url) as app:
        record = app.tenants.add_platform_admin(principal_id)
        if json_output:
            print_json(record)
        else:
            console.print(f"{record.principal_id} is a platform administrator (tenant _global)")
