"""``tether runs``, ``tether approvals`` and ``tether worker``."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from tether.app import Tether
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
    say_database,
    write_text,
)
from tether.clock import format_timestamp
from tether.config import Settings, load_settings
from tether.errors import InvalidInput, StorageUnavailable
from tether.redaction import get_logger
from tether.runs.models import JournalKind, WaitStatus
from tether.runs.worker import MAX_BACKOFF_S, Backoff, Worker, load_registry

log = get_logger("tether.worker")

runs_app = typer.Typer(help="Inspect and operate runs.", no_args_is_help=True)
approvals_app = typer.Typer(
    help="The approvals inbox: list, show, approve, reject.", no_args_is_help=True
)

RunId = Annotated[str, typer.Argument(help="Run id (a UUID).")]
ApprovalId = Annotated[str, typer.Argument(help="Approval request id (a UUID).")]


def _when(value: Any) -> str:
    return format_timestamp(value) if value is not None else "-"


@runs_app.command("ls")
def list_runs(
    tenant: TenantOption,
    actor: ActorOption,
    status: Annotated[str | None, typer.Option(help="Only runs in this status.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10000, help="Most runs to show.")] = 50,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """List runs, newest first."""
    with reporting(json_output), open_app(url) as app:
        runs = app.runs.all(acting(app, tenant, actor), status=status, limit=limit)
        if json_output:
            print_json(runs)
            return
        table = Table("run", "workflow", "status", "node", "steps", "updated")
        for run in runs:
            table.add_row(
                run.run_id,
                f"{run.workflow}@{run.workflow_version}",
                run.status.value,
                run.current_node,
                str(run.steps),
                _when(run.updated_at),
            )
        console.print(table)


@runs_app.command("show")
def show_run(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show a run: status, waits, effects and its current state."""
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        run = app.runs.get(principal, run_id)
        journal = app.runs.journal(principal, run_id)
        waits = app.runs.waits(principal, run_id=run_id, status=None)
        state = app.runs.state(principal, run_id)
        if json_output:
            print_json({"run": run, "state": state, "journal": journal, "waits": waits})
            return
        console.print(f"{run.run_id} {run.workflow}@{run.workflow_version}: {run.status.value}")
        console.print(f"node {run.current_node}, {run.steps} steps, created by {run.created_by}")
        if run.error:
            console.print(f"error: {run.error}", highlight=False)
        for wait in waits:
            console.print(
                f"{wait.kind.value} {wait.wait_id} [{wait.status.value}] "
                f"{wait.reason.value}: {wait.message}"
            )
        table = Table("node", "visit", "#", "kind", "name", "status", "idempotency key")
        for entry in journal:
            table.add_row(
                entry.node,
                str(entry.visit),
                str(entry.position),
                entry.kind.value,
                entry.name,
                entry.status.value,
                entry.idempotency_key,
            )
        console.print(table)
        console.print_json(json.dumps(state))


@runs_app.command("timeline")
def timeline(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """The run's event log in order, with durations."""
    with reporting(json_output), open_app(url) as app:
        events = app.runs.events(acting(app, tenant, actor), run_id)
        if json_output:
            print_json(events)
            return
        table = Table("#", "at", "event", "node", "ms", "details")
        for event in events:
            table.add_row(
                str(event.seq),
                _when(event.at),
                event.type,
                event.node or "",
                f"{event.duration_ms:.1f}" if event.duration_ms is not None else "",
                json.dumps(event.data)[:80],
            )
        console.print(table)


@runs_app.command("handoff")
def handoff(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """A Markdown handoff for the next session: goal, done, blocker, next action, context."""
    with reporting(json_output), open_app(url) as app:
        document = app.runs.handoff_document(acting(app, tenant, actor), run_id)
        if json_output:
            print_json({**document.model_dump(mode="json"), "markdown": document.to_markdown()})
            return
        write_text(document.to_markdown())


@runs_app.command("resume")
def resume(run_id: RunId, tenant: TenantOption, actor: ActorOption, url: UrlOption = None) -> None:
    """Queue a paused or scheduled run again now (operator)."""
    with reporting(), open_app(url) as app:
        run = app.runs.resume(acting(app, tenant, actor), run_id)
        console.print(f"run {run.run_id}: {run.status.value}")


@runs_app.command("cancel")
def cancel(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    reason: Annotated[str, typer.Option(help="Why; recorded in the events and audit trail.")] = "",
    url: UrlOption = None,
) -> None:
    """Cancel a run (operator). Completed effects are not undone."""
    with reporting(), open_app(url) as app:
        run = app.runs.cancel(acting(app, tenant, actor), run_id, reason=reason)
        note = (
            " (at its next node or effect)"
            if run.cancel_requested and not run.status.finished
            else ""
        )
        console.print(f"run {run.run_id}: {run.status.value}{note}")


@runs_app.command("answer")
def answer(
    wait_id: Annotated[str, typer.Argument(help="Interrupt id (from `tether runs show`).")],
    tenant: TenantOption,
    actor: ActorOption,
    value: Annotated[
        str, typer.Option("--answer", help="The answer, as JSON (a bare word is taken as text).")
    ],
    url: UrlOption = None,
) -> None:
    """Answer a run's question (clarification, external dependency, human review)."""
    with reporting(), open_app(url) as app:
        try:
            parsed: Any = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        except RecursionError:
            raise InvalidInput("--answer is nested too deeply") from None
        run = app.runs.answer(acting(app, tenant, actor), wait_id, parsed)
        console.print(f"run {run.run_id}: {run.status.value}")


@approvals_app.command("ls")
def list_approvals(
    tenant: TenantOption,
    actor: ActorOption,
    all_: Annotated[
        bool, typer.Option("--all", help="Include decided and expired requests.")
    ] = False,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Approval requests waiting for a decision (or all with --all)."""
    with reporting(json_output), open_app(url) as app:
        waits = app.runs.waits(
            acting(app, tenant, actor),
            kind=JournalKind.APPROVAL,
            status=None if all_ else WaitStatus.OPEN,
        )
        if json_output:
            print_json(waits)
            return
        table = Table("approval", "run", "status", "risk", "title", "requested by", "expires")
        for wait in waits:
            table.add_row(
                wait.wait_id,
                wait.run_id,
                wait.status.value,
                str(wait.request.get("risk", "")),
                wait.message,
                wait.requested_by,
                _when(wait.expires_at),
            )
        console.print(table)


@approvals_app.command("show")
def show_approval(
    approval_id: ApprovalId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Everything an approver needs: the action, rationale, evidence, risk, alternatives."""
    with reporting(json_output), open_app(url) as app:
        wait = app.runs.wait(acting(app, tenant, actor), approval_id)
        if wait.kind is not JournalKind.APPROVAL:
            raise InvalidInput(f"{approval_id} is not an approval request")
        if json_output:
            print_json(wait)
            return
        request = wait.request
        console.print(f"{wait.message} ({wait.status.value}), run {wait.run_id}")
        console.print(
            f"requested by {wait.requested_by}; approver role {wait.approver_role}; "
            f"expires {_when(wait.expires_at)}"
        )
        console.print("action:")
        console.print_json(json.dumps(request.get("action", {})))
        for label in ("rationale", "risk", "on_approve", "on_reject"):
            console.print(f"{label}: {request.get(label, '')}", highlight=False)
        console.print(f"evidence: {', '.join(request.get('evidence', [])) or '-'}", highlight=False)
        console.print(
            f"alternatives: {'; '.join(request.get('alternatives', [])) or '-'}", highlight=False
        )
        console.print(f"action digest: {wait.action_digest}")


def _decide(
    approval_id: str, tenant: str, actor: str, url: str | None, approve: bool, comment: str | None
) -> None:
    with reporting(), open_app(url) as app:
        run = app.runs.decide(
            acting(app, tenant, actor), approval_id, approve=approve, comment=comment
        )
        console.print(
            f"{'approved' if approve else 'rejected'}; run {run.run_id}: {run.status.value}"
        )


CommentOption = Annotated[str | None, typer.Option(help="A note kept with the decision.")]


@approvals_app.command("approve")
def approve(
    approval_id: ApprovalId,
    tenant: TenantOption,
    actor: ActorOption,
    comment: CommentOption = None,
    url: UrlOption = None,
) -> None:
    """Approve the exact action of a request (needs its approver role; not the requester)."""
    _decide(approval_id, tenant, actor, url, True, comment)


@approvals_app.command("reject")
def reject(
    approval_id: ApprovalId,
    tenant: TenantOption,
    actor: ActorOption,
    comment: CommentOption = None,
    url: UrlOption = None,
) -> None:
    """Reject a request; the run continues down its rejection path."""
    _decide(approval_id, tenant, actor, url, False, comment)


def worker(
    workflows: Annotated[
        str,
        typer.Option(
            envvar="TETHER_WORKFLOWS",
            help="module:attribute of the WorkflowRegistry (or Workflow) to run, e.g. "
            "examples.case_review.workflow:registry",
        ),
    ],
    until_idle: Annotated[
        bool, typer.Option("--until-idle", help="Exit when no run is runnable.")
    ] = False,
    lease: Annotated[
        float,
        typer.Option(min=0.1, help="Lease seconds; another worker may take over a run after it."),
    ] = 60.0,
    poll: Annotated[float, typer.Option(min=0.01, help="Seconds between polls when idle.")] = 0.5,
    owner: Annotated[
        str | None,
        typer.Option(help="Worker identity, unique among live workers (default host:pid:random)."),
    ] = None,
    procedures: Annotated[
        Path | None,
        typer.Option(
            envvar="TETHER_PROCEDURES_DIR",
            help="Directory of skills and policies to publish when it changes, for the "
            "--tenant tenants only (needs at least one).",
        ),
    ] = None,
    procedures_tenant: Annotated[
        list[str] | None,
        typer.Option(
            "--tenant",
            help="A tenant the --procedures directory applies to (repeatable); runs of other "
            "tenants only enforce what their admins published.",
        ),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Execute runnable runs of every tenant until stopped (SIGTERM/SIGINT finish the node).

    Storage that cannot be reached, at start or later, makes the worker wait and retry
    rather than exit; it exits on configuration errors (a bad URL or --workflows, a missing
    database, an outdated schema).
    """
    with reporting():
        settings = load_settings(url=url)
        say_database(settings.database.display)
        registry = load_registry(workflows)
        stopping = threading.Event()

        def stop(signum: int, frame: object) -> None:
            stopping.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        app = _open_when_available(settings, stopping, Backoff(max_s=min(MAX_BACKOFF_S, lease / 2)))
        if app is None:
            return
        with app:
            executor = app.executor(
                registry,
                procedures_dir=str(procedures) if procedures else None,
                procedures_tenants=procedures_tenant or None,
                lease_s=lease,
                owner=owner,
            )
            loop = Worker(executor, app.runs, poll_s=poll)
            loop.stop = stopping
            err_console.print(
                f"worker {loop.executor.owner}: {', '.join(registry.keys)}", highlight=False
            )
            done = loop.run(until_idle=until_idle)
            faults = loop.storage_faults + loop.executor.storage_faults
            err_console.print(
                f"worker {loop.executor.owner}: executed {done} claims, "
                f"{faults} storage faults survived",
                highlight=False,
            )


def _open_when_available(
    settings: Settings, stopping: threading.Event, backoff: Backoff
) -> Tether | None:
    """Open the database, waiting out storage that cannot be reached yet (a server that
    is starting, a locked or read-only file); ``None`` if told to stop meanwhile."""
    while not stopping.is_set():
        try:
            return Tether.open(settings)
        except StorageUnavailable as exc:
            delay = backoff.next_delay()
            log.warning("storage unavailable at start (%s); retrying in %.2fs", exc.code, delay)
            stopping.wait(delay)
    return None
