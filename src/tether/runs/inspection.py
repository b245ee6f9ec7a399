"""What an operator reads before acting on a run: ``tether runs inspect``.

One read of the stored rows: the run, its latest checkpoint and the state it holds, the
node and visit it runs next, its open waits, its last events, and its effects as the
journal records them. An effect's outcome is what the journal can say about the outside
world: ``applied`` (its result was recorded), ``failed`` (the call raised and its error
was recorded) or ``unknown`` (its intent was recorded and no result: the call may or may
not have happened, and the service holding its idempotency key knows); an unknown one is
``interrupted`` when its worker stopped mid-effect, the call perhaps still in flight.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tether.runs.claim import call_may_be_in_flight, load_state_dict
from tether.runs.models import (
    PAUSE_REQUEST,
    JournalEntry,
    JournalKind,
    JournalStatus,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.storage.stores import RunStore


class EffectOutcome(enum.StrEnum):
    APPLIED = "applied"
    """Its result is recorded: the service did it (a re-run of its visit replays it)."""
    FAILED = "failed"
    """The call raised and the error is recorded (a retry of the visit calls it again)."""
    UNKNOWN = "unknown"
    """Its intent is recorded, no result: ask the service about its idempotency key."""


_OUTCOMES = {
    JournalStatus.DONE: EffectOutcome.APPLIED,
    JournalStatus.FAILED: EffectOutcome.FAILED,
    JournalStatus.INTENT: EffectOutcome.UNKNOWN,
}


class EffectRecord(BaseModel):
    """One effect of the journal, as an operator needs it."""

    model_config = ConfigDict(frozen=True)

    node: str
    visit: int
    position: int
    name: str
    idempotency_key: str
    outcome: EffectOutcome
    retry_safe: bool
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    review_id: str | None = None
    """The open ``human_review`` asking whether it happened, if there is one."""
    interrupted: bool = False
    """Its outcome is unknown and its worker stopped mid-effect: the call may still reach
    the service, so its next run asks ``reconcile`` or a person, never just sends it
    again (:func:`~tether.runs.claim.call_may_be_in_flight`)."""

    @property
    def label(self) -> str:
        """The outcome as shown: an unknown one whose call may be in flight, ``interrupted``."""
        if self.outcome is not EffectOutcome.UNKNOWN:
            return self.outcome.value
        return "interrupted" if self.interrupted else "unknown"

    @classmethod
    def of(cls, entry: JournalEntry, reviews: dict[str, str] | None = None) -> EffectRecord:
        return cls(
            node=entry.node,
            visit=entry.visit,
            position=entry.position,
            name=entry.name,
            idempotency_key=entry.idempotency_key,
            outcome=_OUTCOMES[entry.status],
            retry_safe=entry.retry_safe,
            started_at=entry.started_at,
            finished_at=entry.finished_at,
            error=entry.error,
            review_id=(reviews or {}).get(entry.idempotency_key),
            interrupted=call_may_be_in_flight(entry),
        )


class CheckpointSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int
    node: str
    """The node whose completion it records (empty for the run's first checkpoint)."""
    next_node: str
    state_version: int
    created_at: datetime


class RunInspection(BaseModel):
    """Everything ``tether runs inspect`` shows."""

    model_config = ConfigDict(frozen=True)

    run: Run
    visit: int
    """The visit of ``run.current_node`` that runs next (its journal replays)."""
    checkpoint: CheckpointSummary | None
    state: dict[str, Any]
    stop_requested: Literal["cancel", "pause"] | None
    """A request that the run's worker stop it at its next node or effect."""
    waits: list[Wait]
    """Its open waits."""
    pending_effects: list[EffectRecord]
    """Effects whose outcome is unknown (an intent without a result), anywhere."""
    visit_effects: list[EffectRecord]
    """The effects the next visit already journaled: ``retry`` replays them,
    ``retry-node`` runs them again under new keys."""
    events: list[RunEvent]
    """The last events, oldest first."""
    suggested: list[str]
    """Commands that fit the run's situation, most likely first."""


def inspect_txn(txn: RunStore, run: Run, *, events: int) -> RunInspection:
    """Read what :class:`RunInspection` shows about ``run``."""
    tenant, run_id = run.tenant_id, run.run_id
    checkpoints = txn.list_checkpoints(tenant, run_id, from_seq=run.checkpoint_seq)
    latest = checkpoints[-1] if checkpoints else None
    waits = txn.list_waits(tenant, run_id=run_id, status=WaitStatus.OPEN.value)
    reviews = {
        str(w.request["idempotency_key"]): w.wait_id
        for w in waits
        if isinstance(w.request.get("idempotency_key"), str)
    }
    journal = txn.list_journal(tenant, run_id)
    effects = [e for e in journal if e.kind is JournalKind.EFFECT]
    visit = run.visits.get(run.current_node, 0) + 1
    stop: Literal["cancel", "pause"] | None = None
    if run.cancel_requested and not run.status.finished:
        stop = "pause" if (run.cancel_reason or "").startswith(PAUSE_REQUEST) else "cancel"
    return RunInspection(
        run=run,
        visit=visit,
        checkpoint=CheckpointSummary(
            seq=latest.seq,
            node=latest.node,
            next_node=latest.next_node,
            state_version=latest.state_version,
            created_at=latest.created_at,
        )
        if latest
        else None,
        state=load_state_dict(txn, run)[0],
        stop_requested=stop,
        waits=waits,
        pending_effects=[
            EffectRecord.of(e, reviews) for e in effects if e.status is JournalStatus.INTENT
        ],
        visit_effects=[
            EffectRecord.of(e, reviews)
            for e in effects
            if e.node == run.current_node and e.visit == visit
        ],
        events=txn.list_events(tenant, run_id, after_seq=max(0, run.event_seq - events)),
        suggested=suggest(run, waits, stop),
    )


def suggest(run: Run, waits: list[Wait], stop: str | None) -> list[str]:
    """The commands an operator most likely runs next for this run."""
    run_id, why = run.run_id, "--reason <why>"
    commands: list[str] = []
    for wait in waits:
        if "idempotency_key" in wait.request:
            commands += [
                f"tether runs answer {wait.wait_id} --answer '{{\"result\": <what it returned>}}'",
                f"tether runs answer {wait.wait_id} --answer '{{\"retry\": true}}'",
            ]
        elif wait.kind is JournalKind.APPROVAL:
            commands.append(f"tether approvals show {wait.wait_id}")
        elif wait.resume_at is None:
            commands.append(f"tether runs answer {wait.wait_id} --answer <json>")
    status = run.status
    if status is RunStatus.RUNNING and stop != "cancel":
        commands.append(
            f"tether runs resume {run_id} {why}"
            if stop == "pause"
            else f"tether runs pause {run_id} {why}"
        )
    elif status in (RunStatus.FAILED, RunStatus.CANCELLED):
        commands += [
            f"tether runs retry {run_id} {why}",
            f"tether runs retry {run_id} --to-version <N> {why}",
            f"tether runs retry-node {run_id} {why}",
        ]
    elif status in (RunStatus.PAUSED, RunStatus.SCHEDULED) and not commands:
        commands.append(f"tether runs resume {run_id} {why}")
    if status is not RunStatus.RUNNING and not status.finished:
        commands.append(f"tether runs skip {run_id} --next <node> {why}")
    commands.append(f"tether runs fork {run_id} --checkpoint <seq> {why}")
    return commands
