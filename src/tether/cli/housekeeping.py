"""``tether housekeeping``: run a tenant's retention pass by hand."""

from __future__ import annotations

import os
import socket

import typer
from rich.table import Table

from tether.cli._common import (
    ActorOption,
    JsonOption,
    TenantOption,
    UrlOption,
    acting,
    console,
    open_app,
    print_json,
    reporting,
)

housekeeping_app = typer.Typer(
    help="Retention passes (memory, threads, working memory, runs); workers run them on a "
    "schedule.",
    no_args_is_help=True,
)


@housekeeping_app.command("run")
def run_pass(
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Run the tenant's housekeeping pass now (operator), due or not; it is audited with
    its counts, and refused while a worker runs the same tenant's pass."""
    with reporting(json_output), open_app(url) as app:
        owner = f"cli:{socket.gethostname()}:{os.getpid()}"
        report = app.housekeeping.run(acting(app, tenant, actor), owner=owner)
        if json_output:
            print_json(report)
            return
        table = Table("part", "counts")
        table.add_row("memory retention", _counts(report.memory))
        table.add_row("thread retention", _counts(report.threads))
        table.add_row("working memory purged", str(report.working_purged))
        table.add_row("run retention", _counts(report.runs))
        console.print(table)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "nothing to do"
