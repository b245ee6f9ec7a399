"""``tether memory``: propose, recall, inspect, correct, forget, export and erase memories."""

from __future__ import annotations

import json
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
from tether.cli.memory_policy import policy_app
from tether.clock import format_timestamp
from tether.errors import InvalidInput
from tether.memory.models import (
    MemoryKind,
    MemoryProposal,
    MemoryRecord,
    MemoryStatus,
    Scope,
    Sensitivity,
    SourceType,
)
from tether.memory.text import parse_scope

memory_app = typer.Typer(
    help="Governed memory: the model proposes, the policy decides.", no_args_is_help=True
)
memory_app.add_typer(policy_app, name="policy")

MemoryId = Annotated[str, typer.Argument(help="Memory id (a UUID).")]
ScopeOption = Annotated[
    list[str],
    typer.Option(
        "--scope", "-s", help="scope:id to search, repeatable (e.g. user:u-1, case:C-1001)."
    ),
]


def _scopes(values: list[str]) -> list[tuple[Scope, str]]:
    return [parse_scope(value) for value in values]


def _show(record: MemoryRecord) -> None:
    console.print(
        f"{record.memory_id} {record.kind.value} in "
        f"{record.scope.value}:{record.scope_id} [{record.status.value}]"
    )
    console.print(record.text, highlight=False)
    source = record.source_type.value + (f" ({record.source_ref})" if record.source_ref else "")
    console.print(
        f"source {source}; confidence {record.confidence:.2f}; "
        f"sensitivity {record.sensitivity.value}",
        highlight=False,
    )
    console.print(
        f"created by {record.created_by} at {format_timestamp(record.created_at)}; "
        f"{_approval(record)}",
        highlight=False,
    )
    console.print(
        f"valid from {format_timestamp(record.valid_from)}"
        + (f" to {format_timestamp(record.valid_to)}" if record.valid_to else "")
        + "; expires "
        + (format_timestamp(record.expires_at) if record.expires_at else "never"),
        highlight=False,
    )


def _approval(record: MemoryRecord) -> str:
    if record.approved_by:
        return f"approved by {record.approved_by}"
    if record.status is MemoryStatus.PENDING:
        return "waiting for approval (tether memory approve)"
    return "no approval needed (the write policy accepted it)"


@memory_app.command("propose")
def propose(
    text: Annotated[str, typer.Argument(help="What to remember.")],
    scope: Annotated[str, typer.Option(help="scope:id it belongs to, e.g. user:u-1.")],
    tenant: TenantOption,
    actor: ActorOption,
    kind: Annotated[MemoryKind, typer.Option(help="Kind of memory.")] = MemoryKind.FACT,
    source: Annotated[SourceType, typer.Option(help="Where it comes from.")] = SourceType.HUMAN,
    source_ref: Annotated[
        str | None, typer.Option(help="e.g. effect:<idempotency key>, doc:<id>.")
    ] = None,
    source_version: Annotated[str | None, typer.Option(help="Version of the source.")] = None,
    confidence: Annotated[float, typer.Option(min=0.0, max=1.0, help="How sure (0-1).")] = 0.9,
    fact_key: Annotated[
        str | None, typer.Option(help="Same key: the new value supersedes.")
    ] = None,
    subject: Annotated[
        list[str] | None, typer.Option(help="A user id it is about (repeatable).")
    ] = None,
    sensitivity: Annotated[
        Sensitivity,
        typer.Option(help="How sensitive: who may read it depends on the tenant's table."),
    ] = Sensitivity.INTERNAL,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Propose a memory; prints the policy's decision and its reasons."""
    with reporting(json_output), open_app(url) as app:
        [(scope_kind, scope_id)] = _scopes([scope])
        proposal = MemoryProposal(
            text=text,
            kind=kind,
            scope=scope_kind,
            scope_id=scope_id,
            subjects=subject or [],
            source_type=source,
            source_ref=source_ref,
            source_version=source_version,
            confidence=confidence,
            fact_key=fact_key,
            sensitivity=sensitivity,
        )
        decision = app.memory.propose(acting(app, tenant, actor), proposal)
        if json_output:
            print_json(decision)
            return
        console.print(
            f"{decision.verdict.value}"
            + (f" ({decision.action} {decision.memory_id})" if decision.memory_id else "")
        )
        for reason in decision.reasons:
            console.print(
                f"  {reason.rule}: {reason.verdict.value}: {reason.reason}", highlight=False
            )


@memory_app.command("recall")
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    scope: ScopeOption,
    tenant: TenantOption,
    actor: ActorOption,
    limit: Annotated[int, typer.Option(min=1, max=200, help="Most hits.")] = 10,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show why each hit ranked (which part matched: text, context, vector, "
            "episode, time) and what was filtered out, counted and explained by reason "
            "(scope not allowed, sensitivity above clearance, contradicted, unrelated).",
        ),
    ] = False,
    include_unrelated: Annotated[
        bool,
        typer.Option(
            "--include-unrelated",
            help="Also return hits that share no word with the query and are not similar "
            "to it (left out by default).",
        ),
    ] = False,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Hybrid recall within the named scopes (constraints always included), of the
    memories the acting principal may read."""
    with reporting(json_output), open_app(url) as app:
        result = app.memory.recall(
            acting(app, tenant, actor),
            query,
            _scopes(scope),
            limit=limit,
            include_unrelated=include_unrelated,
        )
        if json_output:
            print_json(result)
            return
        table = Table("score", "kind", id_column("memory"), "text", *(["why"] if explain else []))
        for hit in result.hits:
            row = [f"{hit.score:.3f}", hit.record.kind.value, hit.record.memory_id, hit.record.text]
            if explain:
                row.append(json.dumps({k: v for k, v in hit.why.items() if k != "formula"}))
            table.add_row(*row)
        print_table(table)
        if explain:
            console.print(
                f"filtered out: {json.dumps(result.filtered_out)}; "
                f"lexical only: {result.lexical_only}",
                highlight=False,
            )
            for reason, meaning in result.filtered_why.items():
                console.print(
                    f"  {reason} ({result.filtered_out[reason]}): {meaning}", highlight=False
                )


@memory_app.command("show")
def show(
    memory_id: MemoryId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """One memory with its provenance."""
    with reporting(json_output), open_app(url) as app:
        record = app.memory.get(acting(app, tenant, actor), memory_id)
        print_json(record) if json_output else _show(record)


@memory_app.command("history")
def history(
    memory_id: MemoryId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Every version of the fact, oldest first."""
    with reporting(json_output), open_app(url) as app:
        records = app.memory.history(acting(app, tenant, actor), memory_id)
        if json_output:
            print_json(records)
            return
        for record in records:
            _show(record)


@memory_app.command("correct")
def correct(
    memory_id: MemoryId,
    text: Annotated[str, typer.Argument(help="The corrected content.")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
) -> None:
    """Replace a memory's content; the old version stays in its history."""
    with reporting(), open_app(url) as app:
        decision = app.memory.correct(acting(app, tenant, actor), memory_id, text)
        console.print(f"{decision.verdict.value}: {decision.action} {decision.memory_id}")


@memory_app.command("forget")
def forget(
    memory_id: MemoryId, tenant: TenantOption, actor: ActorOption, url: UrlOption = None
) -> None:
    """Hide a memory now; it is purged after the grace period (unless on legal hold)."""
    with reporting(), open_app(url) as app:
        record = app.memory.forget(acting(app, tenant, actor), memory_id)
        console.print(
            "forgotten; purged after "
            + (format_timestamp(record.purge_after) if record.purge_after else "-")
        )


@memory_app.command("export")
def export(
    subject: Annotated[str, typer.Argument(help="The person's user id.")],
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
) -> None:
    """Everything held about a person, as JSON."""
    with reporting(True), open_app(url) as app:
        print_json(app.subjects.export(acting(app, tenant, actor), subject))


@memory_app.command("erase")
def erase(
    subject: Annotated[str, typer.Argument(help="The person's user id.")],
    tenant: TenantOption,
    actor: ActorOption,
    yes: Annotated[bool, typer.Option("--yes", help="Do it (erasure cannot be undone).")] = False,
    url: UrlOption = None,
) -> None:
    """Erase every copy of a person's memories (admin); keeps a tombstone without the text."""
    with reporting(), open_app(url) as app:
        if not yes:
            raise InvalidInput("erasure cannot be undone: add --yes")
        counts = app.subjects.erase(acting(app, tenant, actor), subject)
        console.print(f"erased {counts['memories']} memories of the subject")


@memory_app.command("retention")
def retention(
    tenant: TenantOption, actor: ActorOption, url: UrlOption = None, json_output: JsonOption = False
) -> None:
    """Run the retention cycle now: expire, decay and purge (legal holds respected)."""
    with reporting(json_output), open_app(url) as app:
        counts = app.memory.retention_cycle(acting(app, tenant, actor))
        print_json(counts) if json_output else console.print(counts or "nothing to do")


@memory_app.command("reembed")
def reembed(tenant: TenantOption, actor: ActorOption, url: UrlOption = None) -> None:
    """Compute vectors with the installed embedder for every live memory of the tenant."""
    with reporting(), open_app(url) as app:
        done = app.memory.reembed(acting(app, tenant, actor))
        console.print(
            f"embedded {done} memories with "
            + (app.memory.embedder.id if app.memory.embedder else "-")
        )


@memory_app.command("pending")
def pending(
    tenant: TenantOption,
    actor: ActorOption,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="Most memories to list.")] = 100,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Held memories waiting for a person, oldest first (approver, operator or admin)."""
    with reporting(json_output), open_app(url) as app:
        records = app.memory.pending(acting(app, tenant, actor), limit=limit)
        if json_output:
            print_json(records)
            return
        table = Table(id_column("memory"), "scope", "kind", "source", "proposed by", "text")
        for record in records:
            table.add_row(
                record.memory_id,
                f"{record.scope.value}:{record.scope_id}",
                record.kind.value,
                record.source_type.value,
                record.created_by,
                record.text,
            )
        if records:
            print_table(table)
        else:
            console.print("nothing is waiting for approval")


@memory_app.command("approve")
def approve(
    memory_id: MemoryId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Activate a held memory (approver, operator or admin; not the one who proposed it)."""
    with reporting(json_output), open_app(url) as app:
        record = app.memory.approve(acting(app, tenant, actor), memory_id)
        print_json(record) if json_output else console.print(f"approved {record.memory_id}")


@memory_app.command("reject")
def reject(
    memory_id: MemoryId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Turn down a held memory: it is deleted with every copy; the rejection is audited."""
    with reporting(json_output), open_app(url) as app:
        record = app.memory.reject(acting(app, tenant, actor), memory_id)
        print_json(record) if json_output else console.print(f"rejected {record.memory_id}")


@memory_app.command("consent")
def consent(
    tenant: TenantOption,
    actor: ActorOption,
    purpose: Annotated[str, typer.Option(help="What the consent covers.")] = "preferences",
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Withdraw the consent instead of giving it.")
    ] = False,
    url: UrlOption = None,
) -> None:
    """Give (or with --revoke withdraw) the acting user's consent to remembering their
    preferences; without it, preferences in their user scope are refused."""
    with reporting(), open_app(url) as app:
        principal = acting(app, tenant, actor)
        if revoke:
            app.memory.revoke_consent(principal, purpose=purpose)
        else:
            app.memory.grant_consent(principal, purpose=purpose)
        console.print(
            f"{'revoked' if revoke else 'granted'} consent of {principal.principal_id} to {purpose}"
        )
