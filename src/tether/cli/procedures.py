"""``tether procedures``: check, publish and show skills and policies (YAML files)."""

from __future__ import annotations

from pathlib import Path
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
    open_app,
    print_json,
    reporting,
)
from tether.clock import format_timestamp
from tether.errors import ProcedureInvalid
from tether.procedures.service import Procedures, render

procedures_app = typer.Typer(
    help="Skills and policies as versioned YAML files, enforced before effects.",
    no_args_is_help=True,
)

Directory = Annotated[
    Path, typer.Argument(help="Directory of *.yaml / *.yml procedure files (one document each).")
]


@procedures_app.command("check")
def check(directory: Directory, json_mode: JsonOption = False) -> None:
    """Validate a directory without publishing it; warn about contradicting policies.

    Exits 3 when a file is malformed (each problem names its file and field).
    """
    with reporting(json_mode):
        report = Procedures.check_directory(directory)
    if json_mode:
        print_json(
            {
                "directory": report.directory,
                "version": report.version,
                "skills": report.skills,
                "policies": report.policies,
                "errors": report.errors,
                "warnings": report.warnings,
            }
        )
    else:
        for error in report.errors:
            err_console.print(f"error: {error}", highlight=False, soft_wrap=True)
        for warning in report.warnings:
            err_console.print(f"warning: {warning}", highlight=False, soft_wrap=True)
        if report.ok:
            console.print(
                f"ok: {report.skills} skill(s), {report.policies} policy(ies), "
                f"version {report.version}",
                highlight=False,
            )
    if not report.ok:
        raise typer.Exit(ProcedureInvalid.exit_code)


@procedures_app.command("publish")
def publish(
    directory: Directory,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_mode: JsonOption = False,
    allow_empty: Annotated[
        bool,
        typer.Option(
            "--allow-empty",
            help="Publish a directory with no skills or policies (removes every policy in "
            "force); refused without this flag.",
        ),
    ] = False,
) -> None:
    """Validate a directory and make it the version every worker of the tenant enforces
    (admins only; audited). A malformed directory changes nothing; an empty one is
    published only with --allow-empty."""
    with reporting(json_mode), open_app(url) as app:
        principal = acting(app, tenant, actor)
        result = app.procedures.publish(principal, directory, allow_empty=allow_empty)
        if json_mode:
            print_json(
                {"version": result.version, "previous": result.previous, "changed": result.changed}
            )
            return
        if result.changed:
            before = f"was {result.previous}" if result.previous else "the first version"
            console.print(f"published {result.version} ({before})", highlight=False)
        else:
            console.print(f"{result.version} is already in force; nothing changed", highlight=False)


@procedures_app.command("show")
def show(
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_mode: JsonOption = False,
) -> None:
    """Show the version in force: who published it, when, and what it says."""
    with reporting(json_mode), open_app(url) as app:
        current = app.procedures.current(acting(app, tenant, actor))
        if json_mode:
            print_json(
                None
                if current is None
                else {
                    "version": current.procedures.version,
                    "since": format_timestamp(current.since),
                    "by": current.by,
                    "source": current.source,
                    "documents": current.procedures.documents,
                }
            )
            return
        if current is None:
            console.print(f"no procedures published in tenant {tenant!r}", highlight=False)
            return
        found = current.procedures
        console.print(
            f"version {found.version}\nin force since {format_timestamp(current.since)} "
            f"(by {current.by}, from {current.source})\n",
            highlight=False,
        )
        for block in render(found):
            console.print(block + "\n", highlight=False, markup=False)


@procedures_app.command("history")
def history(
    tenant: TenantOption,
    actor: ActorOption,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Most versions to show.")] = 20,
    url: UrlOption = None,
    json_mode: JsonOption = False,
) -> None:
    """List the published versions, newest first: when, by whom (a principal, or
    worker:<id> for a worker's directory) and from where."""
    with reporting(json_mode), open_app(url) as app:
        rows = app.procedures.history(acting(app, tenant, actor), limit=limit)
        if json_mode:
            print_json(
                [
                    {
                        "version": row.version,
                        "published_at": format_timestamp(row.published_at),
                        "published_by": row.published_by,
                        "source": row.source,
                    }
                    for row in rows
                ]
            )
            return
        table = Table("version", "published", "by", "source")
        for row in rows:
            table.add_row(
                row.version[:12], format_timestamp(row.published_at), row.published_by, row.source
            )
        console.print(table)
