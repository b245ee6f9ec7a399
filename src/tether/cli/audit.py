"""``tether audit``: read and verify the hash-chained audit trail."""

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
from tether.errors import IntegrityViolation, InvalidInput
from tether.principals import RESERVED_PREFIX

audit_app = typer.Typer(help="Read and verify the audit trail.", no_args_is_help=True)

OptionalTenant = Annotated[
    str | None,
    typer.Option(
        "--tenant", "-t", envvar="TETHER_TENANT", help="Tenant to check (default: every tenant)."
    ),
]


@audit_app.command("verify")
def verify(
    tenant: OptionalTenant = None, url: UrlOption = None, json_output: JsonOption = False
) -> None:
    """Check the hash chain; name the first edited, missing or reordered entry.

    Exits 0 when every chain checked is intact and 8 when one is broken.
    """
    with reporting(json_output), open_app(url) as app:
        everyone = app.tenants.all(include_reserved=True)
        # A reserved tenant (global memory) is checked once it has a trail.
        tenant_ids = (
            [tenant]
            if tenant
            else [
                t.tenant_id
                for t in everyone
                if t.audit_entries or not t.tenant_id.startswith(RESERVED_PREFIX)
            ]
        )
        reports = [app.audit.verify(tenant_id) for tenant_id in tenant_ids]
        if json_output:
            print_json(
                [
                    {
                        "tenant_id": r.tenant_id,
                        "ok": r.ok,
                        "entries_checked": r.entries_checked,
                        "problem": r.problem.__dict__ if r.problem else None,
                    }
                    for r in reports
                ]
            )
        else:
            for report in reports:
                if report.ok:
                    console.print(
                        f"ok {report.tenant_id}: {report.entries_checked} entries, chain intact",
                        highlight=False,
                    )
                elif report.problem is not None:
                    err_console.print(
                        f"BROKEN {report.tenant_id}: {report.problem.message}",
                        highlight=False,
                    )
        broken = [r.tenant_id for r in reports if not r.ok]
        if broken:
            err_console.print(
                f"error[{IntegrityViolation.code}]: the audit trail of "
                f"{', '.join(broken)} was tampered with",
                highlight=False,
            )
            raise typer.Exit(IntegrityViolation.exit_code)


@audit_app.command("ls")
def list_entries(
    tenant: TenantOption,
    actor: ActorOption,
    target: Annotated[
        str | None,
        typer.Option(help="Only entries about this object: run:<id>, memory:<id>, principal:<id>…"),
    ] = None,
    by: Annotated[str | None, typer.Option(help="Only entries by this principal.")] = None,
    action: Annotated[
        str | None, typer.Option(help="Only entries of this action (run.cancelled…).")
    ] = None,
    before: Annotated[
        int | None,
        typer.Option(min=1, help="Continue a newest-first listing below this sequence number."),
    ] = None,
    after: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="List oldest first, from the entry after this sequence number "
            "(to follow a trail forward; no filters).",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=10000, help="Most entries to show.")] = 50,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """List a tenant's audit entries, newest first, as the console shows them.

    --target, --by and --action narrow the list; the last entry's number, given to
    --before, shows the next (older) page. --after lists oldest first instead.
    Needs an admin, operator or approver (--as).
    """
    with reporting(json_output):
        if after is not None and (before is not None or target or by or action):
            raise InvalidInput(
                "--after lists the whole trail oldest first; it takes no --before, --target, "
                "--by or --action (leave --after out to filter, newest first)"
            )
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        entries = (
            app.audit.entries(principal, after_seq=after, limit=limit)
            if after is not None
            else app.audit.latest(
                principal,
                before_seq=before,
                target=target,
                actor_id=by,
                action=action,
                limit=limit,
            )
        )
        if json_output:
            print_json(entries)
            return
        table = Table("#", "at", id_column("actor"), "action", id_column("target"), "subjects")
        for entry in entries:
            table.add_row(
                str(entry.seq),
                format_timestamp(entry.at),
                entry.actor_id,
                entry.action,
                entry.target,
                str(len(entry.subject_hashes)),
            )
        print_table(table)
