"""``tether runs``, ``tether approvals`` and ``tether worker``."""

from __future__ import annotations

import json
import signal
import threading
from datetime import timedelta
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
from tether.runs.engine import default_owner
from tether.runs.models import JournalKind, WaitStatus
from tether.runs.stuck import StuckThresholds
from tether.runs.worker import MAX_BACKOFF_S, Backoff, Worker, load_registry, run_workers

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


@runs_app.command("stuck")
def stuck(
    tenant: TenantOption,
    actor: ActorOption,
    workflows: Annotated[
        str | None,
        typer.Option(
            envvar="TETHER_WORKFLOWS",
            help="module:attribute of the WorkflowRegistry whose checkpoint SLAs apply "
            "(without it, no run is stuck for want of a checkpoint).",
        ),
    ] = None,
    grace: Annotated[
        float,
        typer.Option(min=0, help="Seconds past a lease's or wait's expiry before it counts."),
    ] = StuckThresholds.grace.total_seconds(),
    effect_timeout: Annotated[
        float, typer.Option(min=0, help="Seconds an effect may go without a result.")
    ] = StuckThresholds.effect_timeout.total_seconds(),
    takeovers: Annotated[
        int, typer.Option(min=1, help="Lease takeovers that mean the run's workers keep dying.")
    ] = StuckThresholds.takeovers,
    limit: Annotated[int, typer.Option(min=1, max=10000, help="Most rows to show.")] = 100,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Runs that will not move without an operator: cause, age, the command to run first."""
    with reporting(json_output):
        registry = load_registry(workflows) if workflows else None
        thresholds = StuckThresholds(
            grace=timedelta(seconds=grace),
            effect_timeout=timedelta(seconds=effect_timeout),
            takeovers=takeovers,
        )
        with open_app(url) as app:
            found = app.runs.stuck(
                acting(app, tenant, actor), workflows=registry, thresholds=thresholds, limit=limit
            )
        if json_output:
            print_json(found)
            return
        table = Table("run", "workflow", "status", "cause", "age", "suggested")
        for row in found:
            table.add_row(
                row.run_id,
                row.workflow,
                row.status,
                row.cause.value,
                str(timedelta(seconds=round(row.age_s))),
                row.suggested,
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
        parsed = json_or_text(value, "--answer")
        run = app.runs.answer(acting(app, tenant, actor), wait_id, parsed)
        console.print(f"run {run.run_id}: {run.status.value}")


def json_or_text(value: str, option: str) -> Any:
    """``value`` read as JSON, or as text when it is not JSON."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value
    except RecursionError:
        raise InvalidInput(f"{option} is nested too deeply") from None


@runs_app.command("send")
def send(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    message: Annotated[
        str, typer.Option("--message", help="The message, as JSON (a bare word is text).")
    ],
    url: UrlOption = None,
) -> None:
    """Send new user input to a running or waiting run; a node reads it with ctx.receive()."""
    with reporting(), open_app(url) as app:
        sent = app.inbox.send(
            acting(app, tenant, actor), run_id, json_or_text(message, "--message")
        )
        console.print(f"run {run_id}: message {sent.seq} delivered ({sent.message_id})")


@runs_app.command("inbox")
def inbox(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """The messages sent to a run, oldest first."""
    with reporting(json_output), open_app(url) as app:
        messages = app.inbox.messages(acting(app, tenant, actor), run_id, limit=1000)
        if json_output:
            print_json(messages)
            return
        table = Table("seq", "sent", "by", "message")
        for m in messages:
            table.add_row(str(m.seq), _when(m.sent_at), m.sent_by, json.dumps(m.message))
        console.print(table)


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
    poll: Annotated[
        float,
        typer.Option(
            min=0.01,
            help="Most seconds an idle worker sleeps without a wake-up (the fallback when "
            "one is lost).",
        ),
    ] = 2.0,
    owner: Annotated[
        str | None,
        typer.Option(help="Worker identity, unique among live workers (default host:pid:random)."),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Runs executed at once by this process, one thread each (their owners end "
            "in /1, /2, ...).",
        ),
    ] = 1,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Serve Prometheus metrics at http://<metrics-host>:PORT/metrics (needs the "
            "'metrics' extra).",
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address the metrics endpoint listens on.")
    ] = "127.0.0.1",
    url: UrlOption = None,
) -> None:
    """Execute runnable runs of every tenant until stopped (SIGTERM/SIGINT finish the node).

    Idle, it sleeps until storage wakes it (LISTEN/NOTIFY on PostgreSQL; on SQLite, a
    check every few milliseconds for another connection's commit), until the next timer
    is due, or --poll seconds. When idle it also runs each tenant's housekeeping pass when
    due (TETHER_HOUSEKEEPING_INTERVAL_S) and delivers webhooks (the first of the
    --concurrency workers does).

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
            base = owner or default_owner()
            loops = []
            for index in range(1, concurrency + 1):
                executor = app.executor(
                    registry, lease_s=lease, owner=base if concurrency == 1 else f"{base}/{index}"
                )
                loops.append(
                    Worker(
                        executor,
                        app.runs,
                        poll_s=poll,
                        wakeups=app.storage.wakeups(),
                        # one worker of the process does the idle chores; the rest stay free
                        idle_tasks=app.idle_tasks(executor.owner, registry) if index == 1 else (),
                    )
                )
            for loop in loops:
                loop.stop = stopping
            server = _serve_metrics(app, loops, metrics_host, metrics_port)
            err_console.print(
                f"worker {base} (x{concurrency}): {', '.join(registry.keys)}", highlight=False
            )
            try:
                done = run_workers(loops, until_idle=until_idle)
            finally:
                for loop in loops:
                    if loop.wakeups is not None:
                        loop.wakeups.close()
                if server is not None:
                    server.shutdown()
            faults = sum(loop.storage_faults + loop.executor.storage_faults for loop in loops)
            err_console.print(
                f"worker {base}: executed {done} claims, {faults} storage faults survived",
                highlight=False,
            )


def _serve_metrics(app: Tether, loops: list[Worker], host: str, port: int | None) -> Any:
    """Start the metrics endpoint if a port was given; the server (or ``None``)."""
    if port is None:
        return None
    try:
        from tether.runs.prometheus import metrics_registry, serve_metrics
    except ImportError as exc:
        raise InvalidInput(
            "--metrics-port needs prometheus-client: pip install 'tether[metrics]'"
        ) from exc
    try:
        server = serve_metrics(metrics_registry(app.storage, app.clock, loops), port, host)
    except OSError as exc:
        raise InvalidInput(f"cannot serve metrics on {host}:{port}: {exc}") from exc
    err_console.print(f"metrics at http://{host}:{port}/metrics", highlight=False)
    return server


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
