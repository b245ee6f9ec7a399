"""The ``tether`` command: a thin layer over the Python API."""

from __future__ import annotations

from typing import Annotated

import typer

from tether import __version__
from tether.cli import admin, demo
from tether.cli.audit import audit_app
from tether.cli.housekeeping import housekeeping_app
from tether.cli.memory import memory_app
from tether.cli.procedures import procedures_app
from tether.cli.retention import gc, retention_app
from tether.cli.runs import approvals_app, runs_app, worker
from tether.cli.tenants import platform_app, principals_app, tenants_app
from tether.cli.threads import context_app, threads_app
from tether.cli.webhooks import webhooks_app

app = typer.Typer(
    name="tether",
    help=(
        "Durable runs and governed memory for long-running AI agents.\n\n"
        "Every command names the database it uses (TETHER_URL, default "
        "sqlite:///./tether.db) on stderr. Exit codes: 0 ok, 1 unexpected failure, 2 usage, "
        "3 invalid input or settings, 4 not found, 5 conflict, 6 permission denied, "
        "7 database unavailable, missing or at the wrong schema, 8 integrity violation."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tether {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Durable runs and governed memory for long-running AI agents."""


app.command()(admin.migrate)
app.command()(admin.status)
app.command()(demo.demo)
app.add_typer(tenants_app, name="tenants")
app.add_typer(principals_app, name="principals")
app.add_typer(platform_app, name="platform")
app.add_typer(audit_app, name="audit")
app.add_typer(runs_app, name="runs")
app.add_typer(approvals_app, name="approvals")
app.add_typer(memory_app, name="memory")
app.add_typer(procedures_app, name="procedures")
app.add_typer(threads_app, name="threads")
app.add_typer(context_app, name="context")
app.command()(worker)
app.command()(gc)
app.add_typer(retention_app, name="retention")
app.add_typer(housekeeping_app, name="housekeeping")
app.add_typer(webhooks_app, name="webhooks")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
