"""The recovery runbook under ``tether runs``: inspect, checkpoints, pause, resume, cancel,
retry, retry-node, skip, complete, fork.

Each action takes ``--reason`` (required; kept as an erasable operator note, cited by
digest in the run's events and the audit trail) and ``--comment``. This module adds the
commands to the ``runs`` group of :mod:`tether.cli.runs`, so ``tether runs`` loads it.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Column, Table

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
    reporting,
)
from tether.cli.runs import RunId, json_object, runs_app, when
from tether.errors import Conflict
from tether.runs.forking import RerunEffect
from tether.runs.inspection import EffectRecord
from tether.runs.models import END, Run
from tether.runs.worker import load_registry

__all__ = ["runs_app"]

Reason = Annotated[
    str,
    typer.Option(
        "--reason", help="Why (required); kept as an erasable note, cited by digest in the trail."
    ),
]
Comment = Annotated[
    str | None, typer.Option(help="Anything else worth keeping; an erasable note too.")
]
RerunEffects = Annotated[
    bool,
    typer.Option(
        "--rerun-effects",
        help="Proceed although effects already done (or maybe done) run again under new keys.",
    ),
]


def _said(run: Run, detail: str = "") -> None:
    console.print(f"run {run.run_id}: {run.status.value}{detail}")


def _effects_table(title: str, effects: list[EffectRecord]) -> None:
    if not effects:
        return
    console.print(title)
    table = Table(
        "node", "visit", "effect", "outcome", id_column("idempotency key"), id_column("review")
    )
    for e in effects:
        table.add_row(e.node, str(e.visit), e.name, e.label, e.idempotency_key, e.review_id or "")
    print_table(table)


@runs_app.command("inspect")
def inspect(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    events: Annotated[int, typer.Option(min=1, max=1000, help="How many last events.")] = 10,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """What to know before acting: checkpoint, node, waits, effects and whether they happened."""
    with reporting(json_output), open_app(url) as app:
        seen = app.runbook.inspect(acting(app, tenant, actor), run_id, events=events)
        if json_output:
            print_json(seen)
            return
        run = seen.run
        console.print(f"run {run.run_id} {run.workflow}@{run.workflow_version}: {run.status.value}")
        stop = f"; asked to {seen.stop_requested}" if seen.stop_requested else ""
        console.print(f"node {run.current_node} (visit {seen.visit}), attempt {run.attempt}{stop}")
        if run.error:
            console.print(f"error: {run.error}")
        if seen.checkpoint is not None:
            c = seen.checkpoint
            done = f"after {c.node}" if c.node else "the initial state"
            console.print(
                f"checkpoint {c.seq} ({done}, next {c.next_node}) at {when(c.created_at)}"
            )
        console.print(f"state: {json.dumps(seen.state, sort_keys=True)}")
        for wait in seen.waits:
            console.print(
                f"waiting: {wait.kind.value} {wait.wait_id} ({wait.reason.value}): {wait.message}"
            )
        _effects_table("effects of this visit:", seen.visit_effects)
        others = [e for e in seen.pending_effects if e not in seen.visit_effects]
        _effects_table("effects of unknown outcome elsewhere:", others)
        table = Table("#", "at", "event", "node", Column("details", overflow="fold"))
        for event in seen.events:
            table.add_row(
                str(event.seq),
                when(event.at),
                event.type,
                event.node or "",
                json.dumps(event.data, sort_keys=True),
            )
        console.print(f"last {len(seen.events)} events:")
        print_table(table)
        console.print("next:")
        for command in seen.suggested:
            console.print(f"  {command}")


@runs_app.command("checkpoints")
def checkpoints(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """The run's checkpoints: the points it can be forked from."""
    with reporting(json_output), open_app(url) as app:
        found = app.runs.checkpoints(acting(app, tenant, actor), run_id)
        if json_output:
            print_json(found)
            return
        table = Table("seq", "after node", "next", "kind", "at")
        for c in found:
            table.add_row(str(c.seq), c.node or "(start)", c.next_node, c.kind, when(c.created_at))
        console.print(table)


@runs_app.command("pause")
def pause(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    reason: Reason,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Pause a run (operator): a running one stops at its next node or effect."""
    with reporting(), open_app(url) as app:
        run = app.runbook.pause(acting(app, tenant, actor), run_id, reason=reason, comment=comment)
        _said(run, " (pauses at its next node or effect)" if run.cancel_requested else "")


@runs_app.command("resume")
def resume(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    reason: Reason,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Queue a paused or scheduled run again now, or keep a running one from pausing (operator)."""
    with reporting(), open_app(url) as app:
        run = app.runbook.resume(acting(app, tenant, actor), run_id, reason=reason, comment=comment)
        _said(run)


@runs_app.command("cancel")
def cancel(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    reason: Reason,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Cancel a run and its child runs (operator). Completed effects are not undone."""
    with reporting(), open_app(url) as app:
        run = app.runbook.cancel(acting(app, tenant, actor), run_id, reason=reason, comment=comment)
        pending = run.cancel_requested and not run.status.finished
        _said(run, " (cancels at its next node or effect)" if pending else "")


@runs_app.command("retry")
def retry(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    reason: Reason,
    to_version: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Move the run to this newer workflow version (needs --workflows); its state "
            "goes through the version's upgrade functions.",
        ),
    ] = None,
    workflows: Annotated[
        str | None,
        typer.Option(
            envvar="TETHER_WORKFLOWS",
            help="module:attribute of the WorkflowRegistry holding --to-version.",
        ),
    ] = None,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Queue a failed or cancelled run again from its last checkpoint; recorded effects replay."""
    with reporting():
        registry = load_registry(workflows) if to_version is not None and workflows else None
        with open_app(url) as app:
            run = app.runbook.retry(
                acting(app, tenant, actor),
                run_id,
                reason=reason,
                comment=comment,
                to_version=to_version,
                workflows=registry,
            )
        _said(run, f" at {run.current_node} on {run.workflow}@{run.workflow_version}")


@runs_app.command("retry-node")
def retry_node(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    reason: Reason,
    rerun_effects: RerunEffects = False,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Run the current node again as a new visit: nothing replays, effects get new keys."""
    with reporting(), open_app(url) as app:
        run = app.runbook.retry_node(
            acting(app, tenant, actor),
            run_id,
            reason=reason,
            comment=comment,
            rerun_effects=rerun_effects,
        )
        _said(run, f" at {run.current_node} (visit {run.visits.get(run.current_node, 0) + 1})")


@runs_app.command("skip")
def skip(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    next_node: Annotated[str, typer.Option("--next", help="The node to go on at.")],
    reason: Reason,
    workflows: WorkflowsOption,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Go on at another node without running the current one (operator)."""
    with reporting():
        registry = load_registry(workflows)
        with open_app(url) as app:
            run = app.runbook.skip(
                acting(app, tenant, actor),
                run_id,
                next_node=next_node,
                reason=reason,
                workflows=registry,
                comment=comment,
            )
        _said(run, f" at {run.current_node}")


@runs_app.command("complete")
def complete(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    output: Annotated[
        str,
        typer.Option(
            help="What the node would have produced: state fields as a JSON object (or @FILE)."
        ),
    ],
    reason: Reason,
    workflows: WorkflowsOption,
    next_node: Annotated[
        str | None,
        typer.Option("--next", help="Go on at this node; without it the run is completed."),
    ] = None,
    comment: Comment = None,
    url: UrlOption = None,
) -> None:
    """Complete the current node, or the whole run, by hand with a given output (operator)."""
    with reporting():
        fields = json_object(output, "--output", "state fields")
        registry = load_registry(workflows)
        with open_app(url) as app:
            run = app.runbook.complete(
                acting(app, tenant, actor),
                run_id,
                output=fields,
                next_node=next_node,
                reason=reason,
                workflows=registry,
                comment=comment,
            )
        _said(run, "" if run.current_node == END else f" at {run.current_node}")


@runs_app.command("fork")
def fork(
    run_id: RunId,
    tenant: TenantOption,
    actor: ActorOption,
    checkpoint: Annotated[
        int, typer.Option(min=0, help="The checkpoint to start from (tether runs checkpoints).")
    ],
    reason: Reason,
    workflows: WorkflowsOption,
    patch: Annotated[
        str | None,
        typer.Option(help="State fields to change first: a JSON object (or @FILE)."),
    ] = None,
    rerun_effects: RerunEffects = False,
    new_run_id: Annotated[
        str | None, typer.Option("--run-id", help="Id of the new run (a UUID); default a new one.")
    ] = None,
    comment: Comment = None,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Start a new run from a checkpoint of this one (time travel); the original is untouched."""
    with reporting(json_output):
        fields = json_object(patch, "--patch", "state fields") if patch is not None else None
        registry = load_registry(workflows)
        with open_app(url) as app:
            principal = acting(app, tenant, actor)
            try:
                forked = app.runbook.fork(
                    principal,
                    run_id,
                    checkpoint=checkpoint,
                    reason=reason,
                    workflows=registry,
                    patch=fields,
                    rerun_effects=rerun_effects,
                    new_run_id=new_run_id,
                    comment=comment,
                )
            except Conflict:
                if not json_output:
                    plan = app.runbook.plan_fork(principal, run_id, checkpoint=checkpoint)
                    _rerun_table(plan.rerun)
                raise
        if json_output:
            print_json(forked)
            return
        _rerun_table(forked.plan.rerun)
        run = forked.run
        console.print(
            f"run {run.run_id} forked from {run_id} at checkpoint {checkpoint}: "
            f"{run.status.value} at {run.current_node}"
        )


def _rerun_table(rerun: list[RerunEffect]) -> None:
    if not rerun:
        return
    console.print("effects the original did after this checkpoint, which the fork runs again:")
    table = Table("node", "visit", "effect", "outcome", id_column("key"), id_column("new key"))
    for r in rerun:
        e = r.effect
        table.add_row(
            e.node, str(e.visit), e.name, e.label, e.idempotency_key, r.new_key or "(new)"
        )
    print_table(table)
