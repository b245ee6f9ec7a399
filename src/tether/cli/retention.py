"""``tether gc`` and ``tether retention``: run retention policies, legal holds, compaction."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
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

retention_app = typer.Typer(
    help="Run retention: policies per workflow and legal holds on runs.", no_args_is_help=True
)

RunId = Annotated[str, typer.Argument(help="Run id (a UUID).")]
Reason = Annotated[str, typer.Option("--reason", help="Why (required); kept as an erasable note.")]


def gc(
    tenant: TenantOption,
    actor: ActorOption,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would go; change nothing.")
    ] = False,
    batch: Annotated[
        int, typer.Option(min=1, max=1000, help="Runs per transaction (short write locks).")
    ] = 50,
    vacuum: Annotated[
        bool,
        typer.Option(
            "--vacuum",
            help="Then give the freed space back (SQLite VACUUM; PostgreSQL VACUUM FULL of "
            "the run tables, which needs the tables' owner).",
        ),
    ] = False,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Compact finished runs past their workflow's retention period (see `retention set`).

    A compacted run keeps its row, its final checkpoint, its effect journal's keys and
    outcomes and its audit entries; runs under a legal hold are skipped.
    """
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        with Progress(
            TextColumn("gc"),
            BarColumn(),
            MofNCompleteColumn(),
            console=err_console,
            disable=json_output,
            transient=True,
        ) as bar:
            task = bar.add_task("runs", total=None)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            result = app.retention.gc(principal, dry_run=dry_run, batch=batch, progress=advance)
        if vacuum and not dry_run:
            app.storage.reclaim_run_space()
        if json_output:
            print_json(result)
            return
        verb = "would compact" if dry_run else "compacted"
        console.print(
            f"{verb} {result.compacted} of {result.examined} runs past retention "
            f"({result.held} under legal hold)"
        )
        table = Table("table", "rows deleted" if not dry_run else "rows to delete")
        for name, count in result.deleted.items():
            table.add_row(name, str(count))
        table.add_row("run_journal payloads", str(result.payloads_cleared))
        console.print(table)


@retention_app.command("set")
def set_policy(
    workflow: Annotated[str, typer.Argument(help="Workflow name, or * for the default.")],
    days: Annotated[int, typer.Option("--days", min=0, help="Days a finished run is kept.")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
) -> None:
    """Keep finished runs of WORKFLOW this many days, then let `tether gc` compact them."""
    with reporting(), open_app(url) as app:
        app.retention.set_policy(acting(app, tenant, actor), workflow, days)
        console.print(f"{workflow}: finished runs kept {days} days")


@retention_app.command("unset")
def unset_policy(
    workflow: Annotated[str, typer.Argument(help="Workflow name, or *.")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
) -> None:
    """Remove WORKFLOW's policy (its runs fall back to *, or are kept forever)."""
    with reporting(), open_app(url) as app:
        app.retention.remove_policy(acting(app, tenant, actor), workflow)
        console.print(f"{workflow}: policy removed")


@retention_app.command("ls")
def list_policies(
    tenant: TenantOption, actor: ActorOption, url: UrlOption = None, json_output: JsonOption = False
) -> None:
    """Retention policies and legal holds of the tenant."""
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        policies = app.retention.policies(principal)
        holds = app.retention.holds(principal)
        if json_output:
            print_json({"policies": policies, "holds": holds})
            return
        table = Table("workflow", "days kept")
        for workflow, days in policies.items():
            table.add_row(workflow, str(days))
        console.print(table)
        held = Table(id_column("held run"), id_column("hold"), "by", "reason note")
        for hold in holds:
            held.add_row(hold.run_id, hold.hold_id, hold.created_by, hold.note_digest)
        print_table(held)


@retention_app.command("hold")
def hold(
    run_id: RunId, tenant: TenantOption, actor: ActorOption, reason: Reason, url: UrlOption = None
) -> None:
    """Place a legal hold on a run: `tether gc` never compacts it while held."""
    with reporting(), open_app(url) as app:
        hold_id = app.retention.hold(acting(app, tenant, actor), run_id, reason=reason)
        console.print(f"run {run_id} held ({hold_id})")


@retention_app.command("release")
def release(
    run_id: RunId, tenant: TenantOption, actor: ActorOption, reason: Reason, url: UrlOption = None
) -> None:
    """Release every legal hold on a run."""
    with reporting(), open_app(url) as app:
        count = app.retention.release(acting(app, tenant, actor), run_id, reason=reason)
        console.print(f"run {run_id}: {count} hold(s) released")
