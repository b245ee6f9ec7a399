"""``tether threads`` and ``tether context``: conversation threads and built contexts."""

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
    id_column,
    open_app,
    print_json,
    print_table,
    read_stdin,
    reporting,
)
from tether.clock import format_timestamp
from tether.context.models import ContextOptions
from tether.errors import InvalidInput
from tether.threads.models import NewTurn, TurnKind, TurnRole

threads_app = typer.Typer(
    help="Conversation threads: turns stored once, in order, with summaries beside them.",
    no_args_is_help=True,
)
context_app = typer.Typer(
    help="Working contexts built from a thread within a token budget.", no_args_is_help=True
)

ThreadId = Annotated[str, typer.Argument(help="Thread id.")]


@threads_app.command("create")
def create(
    user: Annotated[str, typer.Argument(help="Id of the user the thread belongs to.")],
    tenant: TenantOption,
    actor: ActorOption,
    title: Annotated[str, typer.Option(help="A title for listings.")] = "",
    thread_id: Annotated[
        str | None, typer.Option("--id", help="Thread id to use (default: a new UUID).")
    ] = None,
    retention_days: Annotated[
        int | None, typer.Option(help="Purge after this many days without a new turn.")
    ] = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Start a thread for a user; prints its id."""
    with reporting(json_output), open_app(url) as app:
        thread = app.threads.create(
            acting(app, tenant, actor),
            user,
            title=title,
            thread_id=thread_id,
            retention_days=retention_days,
        )
        if json_output:
            print_json(thread)
            return
        console.print(thread.thread_id, highlight=False)


@threads_app.command("ls")
def ls(
    tenant: TenantOption,
    actor: ActorOption,
    user: Annotated[str | None, typer.Option(help="Only this user's threads.")] = None,
    limit: Annotated[int, typer.Option(help="Most threads to list.")] = 100,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """List threads, most recently active first."""
    with reporting(json_output), open_app(url) as app:
        threads = app.threads.all(acting(app, tenant, actor), user_id=user, limit=limit)
        if json_output:
            print_json(threads)
            return
        table = Table(id_column("thread"), "user", "turns", "updated", "title")
        for thread in threads:
            table.add_row(
                thread.thread_id,
                thread.user_id,
                str(thread.last_turn_seq),
                format_timestamp(thread.updated_at),
                thread.title,
            )
        print_table(table)


@threads_app.command("show")
def show(
    thread_id: ThreadId,
    tenant: TenantOption,
    actor: ActorOption,
    last: Annotated[int, typer.Option(help="Show this many of the most recent turns.")] = 20,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show a thread, its latest turns and its summaries."""
    with reporting(json_output), open_app(url) as app:
        principal = acting(app, tenant, actor)
        thread = app.threads.get(principal, thread_id)
        turns = app.threads.last_turns(principal, thread_id, last) if thread.last_turn_seq else []
        summaries = app.threads.summaries(principal, thread_id)
        if json_output:
            print_json({"thread": thread, "turns": turns, "summaries": summaries})
            return
        console.print(
            f"{thread.thread_id} user {thread.user_id}, "
            f"{thread.last_turn_seq} turns, {len(summaries)} summaries",
            highlight=False,
        )
        for summary in summaries:
            console.print(
                f"summary {summary.summary_id}: turns {summary.from_seq}-{summary.to_seq} "
                f"({summary.summarizer})",
                highlight=False,
            )
        for turn in turns:
            ref = f" ref={turn.ref}" if turn.ref else ""
            console.print(
                f"[{turn.seq}] {turn.role.value}/{turn.kind.value}{ref}: {turn.content}",
                highlight=False,
                markup=False,
            )


@threads_app.command("append")
def append(
    thread_id: ThreadId,
    content: Annotated[str, typer.Argument(help="The turn's text ('-' reads stdin).")],
    tenant: TenantOption,
    actor: ActorOption,
    role: Annotated[TurnRole, typer.Option(help="Who speaks.")] = TurnRole.USER,
    kind: Annotated[TurnKind, typer.Option(help="What the turn is.")] = TurnKind.MESSAGE,
    ref: Annotated[str | None, typer.Option(help="A reference, e.g. the tool call id.")] = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Append one turn; prints its sequence number and id."""
    with reporting(json_output), open_app(url) as app:
        text = read_stdin() if content == "-" else content
        turn = app.threads.append(
            acting(app, tenant, actor),
            thread_id,
            NewTurn(role=role, kind=kind, content=text, ref=ref),
        )
        if json_output:
            print_json(turn)
            return
        console.print(f"{turn.seq} {turn.turn_id}", highlight=False)


def _read_procedure(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read procedure file {path}: {exc.strerror}") from None


@context_app.command("build")
def build(
    thread_id: ThreadId,
    tenant: TenantOption,
    actor: ActorOption,
    budget: Annotated[int, typer.Option(help="Most tokens the context may take.")],
    query: Annotated[
        str | None, typer.Option(help="Recall memories for this (default: last user turn).")
    ] = None,
    run: Annotated[str | None, typer.Option(help="Include this run's task state.")] = None,
    procedure: Annotated[
        list[Path] | None,
        typer.Option(
            help="A file of procedure text to include instead of the tenant's published "
            "procedures (repeatable)."
        ),
    ] = None,
    summary_every: Annotated[
        int | None, typer.Option(help="Fold the oldest turns into a summary every N turns.")
    ] = None,
    mask_over: Annotated[
        int, typer.Option(help="Mask tool output over this many tokens (0: never).")
    ] = 300,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Build a thread's working context within a token budget and print it."""
    with reporting(json_output), open_app(url) as app:
        texts = [_read_procedure(path) for path in procedure] if procedure else None
        options = ContextOptions(
            summary_every=summary_every, mask_observations_over=mask_over or None
        )
        built = app.context.build(
            acting(app, tenant, actor),
            thread_id,
            budget=budget,
            query=query,
            procedures=texts,
            run_id=run,
            options=options,
        )
        if json_output:
            print_json(built)
            return
        console.print(built.text, highlight=False, markup=False)
        note = " (approximate)" if built.approximate else ""
        err_console.print(f"{built.tokens}/{built.budget} tokens by {built.counter}{note}")
        for part in built.dropped:
            err_console.print(f"dropped {part.what}: {part.reason}")
