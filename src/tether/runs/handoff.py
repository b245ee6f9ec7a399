"""Handoff documents: what the next session needs to pick up a run, from its durable state.

A handoff is written for whoever (person or agent) takes over a run without its prompt:
the goal, what is done (nodes completed, effects applied with their keys, in order), what
the run is blocked on, what must happen next, and the context gathered so far (evidence,
approvals and answers, the current state). Everything comes from the run's stored rows
(the run, its first and latest checkpoints, journal, waits and events), so the document is
the same whichever process writes it and never depends on a model's memory.

:func:`build_handoff` is pure; ``app.runs.handoff(principal, run_id)`` reads the rows and
returns the Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.clock import format_timestamp
from tether.runs.models import (
    JournalEntry,
    JournalKind,
    JournalStatus,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)

_SHORT = 160
"""Longest inline rendering of a value (state fields, answers, actions)."""


class CompletedNode(BaseModel):
    """One finished visit of a node and what it journaled."""

    model_config = ConfigDict(frozen=True)

    node: str
    visit: int
    at: datetime
    next_node: str | None
    calls: list[str]
    """The visit's effects, steps, questions and approvals, in order, one line each."""


class Blocker(BaseModel):
    """Why the run is not moving: an open wait, an error, a cancellation."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """approval, question, schedule, paused, failed or cancelled."""
    summary: str
    wait_id: str | None = None
    reason: str | None = None
    requested_by: str | None = None
    approver_role: str | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    resume_at: datetime | None = None
    details: dict[str, Any] = {}


class HandoffDocument(BaseModel):
    """A run's handoff, structured; :meth:`to_markdown` renders it."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    run_id: str
    workflow: str
    workflow_version: int
    status: RunStatus
    current_node: str
    steps: int
    created_by: str
    created_at: datetime
    updated_at: datetime
    goal: str
    input: dict[str, Any]
    completed: list[CompletedNode]
    in_progress: list[str]
    """What the current, unfinished node visit journaled so far."""
    blocker: Blocker | None
    next_actions: list[str]
    evidence: list[str]
    decisions: list[str]
    """Approvals given or rejected, questions answered, waits expired or cancelled."""
    state: dict[str, Any]

    def to_markdown(self) -> str:
        return render_markdown(self)


def build_handoff(
    run: Run,
    *,
    initial_state: dict[str, Any],
    state: dict[str, Any],
    events: Sequence[RunEvent],
    journal: Sequence[JournalEntry],
    waits: Sequence[Wait],
) -> HandoffDocument:
    """Assemble the handoff of ``run`` from its stored rows (``waits``: every status)."""
    waits_by_id = {wait.wait_id: wait for wait in waits}
    visits: dict[tuple[str, int], list[JournalEntry]] = {}
    for entry in journal:
        visits.setdefault((entry.node, entry.visit), []).append(entry)

    completed: list[CompletedNode] = []
    finished: set[tuple[str, int]] = set()
    for event in events:
        if event.type != "node.completed" or event.node is None:
            continue
        visit = int(event.data.get("visit", 1))
        finished.add((event.node, visit))
        nxt = event.data.get("next")
        completed.append(
            CompletedNode(
                node=event.node,
                visit=visit,
                at=event.at,
                next_node=None if nxt in (None, "__end__") else str(nxt),
                calls=[_describe(e, waits_by_id) for e in visits.get((event.node, visit), [])],
            )
        )
    in_progress = [
        _describe(entry, waits_by_id)
        for (node, visit), entries in visits.items()
        if (node, visit) not in finished
        for entry in entries
    ]
    blocker = _blocker(run, waits_by_id, events)
    return HandoffDocument(
        tenant_id=run.tenant_id,
        run_id=run.run_id,
        workflow=run.workflow,
        workflow_version=run.workflow_version,
        status=run.status,
        current_node=run.current_node,
        steps=run.steps,
        created_by=run.created_by,
        created_at=run.created_at,
        updated_at=run.updated_at,
        goal=_goal(run, initial_state, state),
        input=initial_state,
        completed=completed,
        in_progress=in_progress,
        blocker=blocker,
        next_actions=_next_actions(run, blocker),
        evidence=_evidence(waits, state),
        decisions=[line for wait in waits if (line := _decision(wait)) is not None],
        state=state,
    )


def _short(value: Any, limit: int = _SHORT) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(moment: datetime | None) -> str:
    return format_timestamp(moment) if moment is not None else "-"


def _goal(run: Run, initial_state: dict[str, Any], state: dict[str, Any]) -> str:
    for source in (state, initial_state):
        goal = source.get("goal")
        if goal:
            return _short(goal, 500)
    given = {key: value for key, value in initial_state.items() if value is not None}
    return f"Run `{run.workflow}@{run.workflow_version}` on `{_short(given, 300)}`."


def _describe(entry: JournalEntry, waits: dict[str, Wait]) -> str:
    """One line for a journal entry: what it did and the key it did it under."""
    name = f"`{entry.name}`"
    key = f"key `{entry.idempotency_key}`"
    if entry.kind is JournalKind.EFFECT:
        if entry.status is JournalStatus.DONE:
            return f"effect {name} applied ({key})"
        if entry.status is JournalStatus.FAILED:
            return f"effect {name} failed ({key}): {_short(entry.error or '')}"
        return f"effect {name} started, its outcome not yet recorded ({key})"
    if entry.kind is JournalKind.STEP:
        if entry.status is JournalStatus.FAILED:
            return f"step {name} failed: {_short(entry.error or '')}"
        tokens = (
            f" ({entry.tokens_in} tokens in, {entry.tokens_out} out)" if entry.tokens_in else ""
        )
        return f"step {name}{tokens}"
    wait = waits.get(entry.wait_id or "")
    what = "approval" if entry.kind is JournalKind.APPROVAL else "question"
    ref = f"{what} `{entry.wait_id}`" if entry.wait_id else what
    if wait is None:
        return f"{ref} ({entry.status.value})"
    if wait.status is WaitStatus.OPEN:
        return f"{ref} asked: {_short(wait.message)}; waiting"
    by = f" by `{wait.resolved_by}`" if wait.resolved_by else ""
    return f"{ref} ({wait.reason.value}) {wait.status.value}{by}"


def _blocker(run: Run, waits: dict[str, Wait], events: Sequence[RunEvent]) -> Blocker | None:
    wait = waits.get(run.wait_id or "")
    if wait is not None and wait.status is WaitStatus.OPEN and not run.status.finished:
        return _wait_blocker(wait)
    if run.status is RunStatus.FAILED:
        return Blocker(kind="failed", summary=f"The run failed: {run.error or 'no reason given'}.")
    if run.status is RunStatus.CANCELLED:
        reasons = [e.data.get("reason") for e in events if e.type == "run.cancelled"]
        reason = next((r for r in reversed(reasons) if r), None)
        return Blocker(
            kind="cancelled",
            summary="The run was cancelled" + (f": {reason}." if reason else "."),
        )
    if run.status is RunStatus.SCHEDULED and run.resume_at is not None:
        return Blocker(
            kind="schedule",
            summary=f"The run waits until {_when(run.resume_at)} (a retry or a timed wait).",
            resume_at=run.resume_at,
        )
    if run.status is RunStatus.PAUSED:
        return Blocker(kind="paused", summary="The run is paused.")
    return None


def _wait_blocker(wait: Wait) -> Blocker:
    request = wait.request
    common: dict[str, Any] = {
        "wait_id": wait.wait_id,
        "reason": wait.reason.value,
        "requested_by": wait.requested_by,
        "approver_role": wait.approver_role,
        "created_at": wait.created_at,
        "expires_at": wait.expires_at,
        "resume_at": wait.resume_at,
    }
    if wait.kind is JournalKind.APPROVAL:
        wanted = ("action", "rationale", "risk", "evidence", "on_approve", "on_reject")
        details = {key: request[key] for key in wanted if request.get(key) not in (None, "", [])}
        return Blocker(
            kind="approval",
            summary=f"Approval `{wait.wait_id}` is pending: {_short(wait.message)}",
            details=details,
            **common,
        )
    kind = "schedule" if wait.resume_at is not None else "question"
    return Blocker(
        kind=kind,
        summary=f"{wait.reason.value} `{wait.wait_id}`: {_short(wait.message, 400)}",
        details={key: value for key, value in request.items() if value not in (None, "", [])},
        **common,
    )


def _next_actions(run: Run, blocker: Blocker | None) -> list[str]:
    then = f"Then a worker resumes the run at node `{run.current_node}`"
    if blocker is None:
        if run.status is RunStatus.COMPLETED:
            return ["Nothing: the run completed."]
        return [
            f"A worker (`tether worker --workflows …`) runs node `{run.current_node}` next; "
            "nothing is needed from a person."
        ]
    wait_id = blocker.wait_id
    if blocker.kind == "approval" and wait_id:
        role = blocker.approver_role or "approver"
        expiry = f" before {_when(blocker.expires_at)}" if blocker.expires_at else ""
        outcomes = []
        if blocker.details.get("on_approve"):
            outcomes.append(f"if approved, {blocker.details['on_approve']}")
        if blocker.details.get("on_reject"):
            outcomes.append(f"if rejected, {blocker.details['on_reject']}")
        return [
            f"An approver (role `{role}`, not `{blocker.requested_by}`, who asked) decides "
            f"approval `{wait_id}`{expiry}: `tether approvals show {wait_id}`, then "
            f"`tether approvals approve {wait_id}` or `tether approvals reject {wait_id}`.",
            f"{then} with the decision" + (f": {'; '.join(outcomes)}." if outcomes else "."),
        ]
    if blocker.kind == "question" and wait_id:
        if "idempotency_key" in blocker.details:
            effect = blocker.details.get("effect", "?")
            return [
                f"Someone checks whether effect `{effect}` (key "
                f"`{blocker.details['idempotency_key']}`) took place and answers `{wait_id}`: "
                f"`tether runs answer {wait_id} --answer '{{\"result\": …}}'` if it did, or "
                f"`--answer '{{\"retry\": true}}'` to run it again with the same key.",
                f"{then}.",
            ]
        return [
            f"Someone answers {blocker.reason} `{wait_id}`: "
            f"`tether runs answer {wait_id} --answer JSON`.",
            f"{then} with the answer.",
        ]
    if blocker.kind == "schedule":
        moment = _when(blocker.resume_at or run.resume_at)
        return [
            f"Nothing: the run resumes by itself at {moment}; an operator may resume it now "
            f"with `tether runs resume {run.run_id} --reason <why>`."
        ]
    if blocker.kind == "paused":
        return [f"An operator resumes the run: `tether runs resume {run.run_id} --reason <why>`."]
    if blocker.kind == "failed":
        return [
            f"An operator reads the error (`tether runs show {run.run_id}`, "
            f"`tether runs inspect {run.run_id}`), removes its cause and retries the run "
            f"(`tether runs retry {run.run_id} --reason <why>`, with `--to-version N` once "
            "the fix is a new workflow version): the effects listed as applied replay from "
            "the journal and are not done again."
        ]
    return ["Nothing: the run was cancelled; effects listed as applied are not undone."]


def _evidence(waits: Sequence[Wait], state: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for wait in waits:
        refs = wait.request.get("evidence")
        if isinstance(refs, list):
            found.extend(str(ref) for ref in refs)
    held = state.get("evidence")
    if isinstance(held, str) and held:
        found.append(held)
    elif isinstance(held, list):
        found.extend(str(item) for item in held)
    return list(dict.fromkeys(found))


def _decision(wait: Wait) -> str | None:
    if wait.status is WaitStatus.OPEN:
        return None
    at = _when(wait.resolved_at)
    by = f" by `{wait.resolved_by}`" if wait.resolved_by else ""
    resolution = wait.resolution or {}
    if wait.kind is JournalKind.APPROVAL:
        comment = resolution.get("comment")
        note = f": {_short(comment)}" if comment else ""
        return (
            f"Approval `{wait.wait_id}` ({_short(wait.message)}) {wait.status.value}{by} "
            f"at {at}{note}."
        )
    if wait.status is WaitStatus.ANSWERED and "answer" in resolution:
        return (
            f"{wait.reason.value} `{wait.wait_id}` ({_short(wait.message)}) answered{by} "
            f"at {at}: {_short(resolution['answer'])}."
        )
    return f"{wait.reason.value} `{wait.wait_id}` {wait.status.value}{by} at {at}."


def render_markdown(doc: HandoffDocument) -> str:
    """The handoff as Markdown: goal, completed, blocker, next action, context."""
    lines = [
        f"# Handoff: run {doc.run_id}",
        "",
        f"Workflow `{doc.workflow}@{doc.workflow_version}` in tenant `{doc.tenant_id}`: "
        f"**{doc.status.value}** at node `{doc.current_node}` after {doc.steps} steps. "
        f"Started by `{doc.created_by}` at {_when(doc.created_at)}; last change "
        f"{_when(doc.updated_at)}.",
        "",
        "## Goal",
        "",
        doc.goal,
        "",
        "## Completed",
        "",
    ]
    if not doc.completed:
        lines.append("No node has completed yet.")
    for number, node in enumerate(doc.completed, start=1):
        visit = f" (visit {node.visit})" if node.visit > 1 else ""
        lines.append(f"{number}. `{node.node}`{visit}, at {_when(node.at)}")
        lines.extend(f"   - {call}" for call in node.calls)
    if doc.in_progress:
        lines += ["", f"In progress in `{doc.current_node}`:"]
        lines.extend(f"- {call}" for call in doc.in_progress)
    lines += ["", "## Current blocker", ""]
    lines += _blocker_lines(doc.blocker)
    lines += ["", "## Next action", ""]
    lines.extend(f"{number}. {step}" for number, step in enumerate(doc.next_actions, start=1))
    lines += ["", "## Context", ""]
    lines += ["### Evidence", ""]
    lines += [f"- {ref}" for ref in doc.evidence] or ["None recorded."]
    lines += ["", "### Approvals and answers", ""]
    lines += [f"- {line}" for line in doc.decisions] or ["None yet."]
    lines += ["", "### State", ""]
    shown = {key: value for key, value in doc.state.items() if value is not None}
    lines += [f"- `{key}`: {_short(value)}" for key, value in shown.items()] or ["Empty."]
    return "\n".join(lines) + "\n"


def _blocker_lines(blocker: Blocker | None) -> list[str]:
    if blocker is None:
        return ["None."]
    lines = [blocker.summary]
    facts = []
    if blocker.requested_by:
        facts.append(f"asked by `{blocker.requested_by}` at {_when(blocker.created_at)}")
    if blocker.approver_role:
        facts.append(f"decided by role `{blocker.approver_role}`")
    if blocker.expires_at:
        facts.append(f"expires {_when(blocker.expires_at)}")
    if blocker.resume_at:
        facts.append(f"resumes by itself at {_when(blocker.resume_at)}")
    if facts:
        lines += ["", "- " + "; ".join(facts)]
    for key, value in blocker.details.items():
        lines.append(f"- {key.replace('_', ' ')}: {_short(value)}")
    return lines
