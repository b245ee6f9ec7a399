"""``tether runs`` and ``tether approvals``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from tether.cli._common import (
    ActorOption,
    JsonOption,
    TenantOption,
    UrlOption,
    WorkflowsOption,
    acting,
    console,
    id_column,
    open_app,
    print_json,
    print_table,
    read_stdin,
    reporting,
    write_text,
)
from tether.clock import format_timestamp
from tether.errors import InvalidInput
from tether.runs.models import JournalKind, Wait, WaitStatus
from tether.runs.stuck import StuckThresholds
from tether.runs.worker import load_registry
from tether.runs.workflow import Workflow, WorkflowRegistry

runs_app = typer.Typer(help="Start, inspect and operate runs.", no_args_is_help=True)
approvals_app = typer.Typer(
    help="The approvals inbox: list, show, approve, reject.", no_args_is_help=True
)

_APPROVALS_PAGE = 1000

RunId = Annotated[str, typer.Argument(help="Run id (a UUID).")]
ApprovalId = Annotated[str, typer.Argument(help="Approval request id (a UUID).")]


def when(value: Any) -> str:
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
        table = Table(id_column("run"), "workflow", "status", "node", "steps", "updated")
        for run in runs:
            table.add_row(
                run.run_id,
                f"{run.workflow}@{run.workflow_version}",
                run.status.value,
                run.current_node,
                str(run.steps),
                when(run.updated_at),
            )
        print_table(table)


@runs_app.command("start")
def start_run(
    workflow: Annotated[
        str,
        typer.Argument(
            help="Workflow to start: NAME (its newest registered version) or NAME@VERSION."
        ),
    ],
    tenant: TenantOption,
    actor: ActorOption,
    input_: Annotated[
        str,
        typer.Option(
            "--input",
            help="The run's initial state: a JSON object, or @FILE to read it from a file "
            "(@- reads stdin).",
        ),
    ],
    workflows: WorkflowsOption,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            help="Id of the new run (a UUID); default a new one. An existing id is a conflict.",
        ),
    ] = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Queue a new run of a workflow (agent or operator); a worker executes it."""
    with reporting(json_output):
        state = json_object(input_, "--input", "the run's initial state")
        chosen = _workflow_named(load_registry(workflows), workflow)
        chosen.validate_state(state)
        with open_app(url) as app:
            run = app.runs.start(acting(app, tenant, actor), chosen, state, run_id=run_id)
        if json_output:
            print_json(run)
            return
        console.print(f"run {run.run_id} {run.workflow}@{run.workflow_version}: {run.status.value}")


def json_object(given: str, option: str, what: str) -> dict[str, Any]:
    """The JSON object an option gives inline, as ``@FILE``, or ``@-`` (stdin);
    ``what`` says what it is, for the error."""
    if given.startswith("@"):
        name = given[1:]
        if name == "-":
            text = read_stdin()
        else:
            try:
                text = Path(name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InvalidInput(f"{option}: cannot read {name!r}: {exc}") from None
    else:
        text = given
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{option} is not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidInput(f"{option} is nested too deeply") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"{option} must be a JSON object ({what})")
    return value


def _workflow_named(registry: WorkflowRegistry, given: str) -> Workflow[Any]:
    name, at, version = given.partition("@")
    if at and not version.isdigit():
        raise InvalidInput(f"workflow {given!r}: use NAME or NAME@VERSION (a number)")
    return registry.get(name, int(version) if at else None)


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
        table = Table("node", "visit", "#", "kind", "name", "status", id_column("idempotency key"))
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
        print_table(table)
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
                when(event.at),
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
        table = Table(id_column("run"), "workflow", "status", "cause", "age", "suggested")
        for row in found:
            table.add_row(
                row.run_id,
                row.workflow,
                row.status,
                row.cause.value,
                str(timedelta(seconds=round(row.age_s))),
                row.suggested,
            )
        print_table(table)


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
            table.add_row(str(m.seq), when(m.sent_at), m.sent_by, json.dumps(m.message))
        console.print(table)


@approvals_app.command("ls")
def list_approvals(
    tenant: TenantOption,
    actor: ActorOption,
    all_: Annotated[
        bool, typer.Option("--all", help="Include decided and expired requests.")
    ] = False,
    after: Annotated[
        str | None,
        typer.Option(help="Continue after this approval id (the last one a page listed)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Most requests to show (default: every one).")
    ] = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Approval requests waiting for a decision (or all with --all), oldest first: every
    one, read a page at a time, or --limit of them after --after."""
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        waits: list[Wait] = []
        while limit is None or len(waits) < limit:
            wanted = _APPROVALS_PAGE if limit is None else min(_APPROVALS_PAGE, limit - len(waits))
            page = app.runs.waits(
                principal,
                kind=JournalKind.APPROVAL,
                status=None if all_ else WaitStatus.OPEN,
                after=waits[-1].wait_id if waits else after,
                limit=wanted,
            )
            waits.extend(page)
            if len(page) < wanted:
                break
        if json_output:
            print_json(waits)
            return
        table = Table(
            id_column("approval"),
            id_column("run"),
            "status",
            "risk",
            "title",
            "requested by",
            "expires",
        )
        for wait in waits:
            table.add_row(
                wait.wait_id,
                wait.run_id,
                wait.status.value,
                str(wait.request.get("risk", "")),
                wait.message,
                wait.requested_by,
                when(wait.expires_at),
            )
        print_table(table)


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
            f"expires {when(wait.expires_at)}"
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
