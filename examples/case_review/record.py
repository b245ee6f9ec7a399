"""What the demo keeps of its run for the report: each case's run as stored, the memory
the runs proposed and what a retention pass did to both.

Everything here is read back from the database and the case service after the fact, so
the report shows what happened, not what the script meant to happen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from examples.case_review.service import CaseService
from tether import Tether
from tether.housekeeping import PassReport
from tether.memory import MemoryProposal, MemoryRecord, PolicyConfig, PolicyDecision
from tether.principals import Principal
from tether.runs import Run, Wait
from tether.runs.models import Checkpoint, JournalEntry, RunEvent


@dataclass(frozen=True)
class CaseRun:
    """One case's run, read back in full, with what the case service saw of it."""

    case_id: str
    run: Run
    events: list[RunEvent]
    checkpoints: list[Checkpoint]
    journal: list[JournalEntry]
    waits: list[Wait]
    state: dict[str, Any]
    calls: dict[str, tuple[str, int, int]]
    case: dict[str, Any]
    notes: list[str]

    def effects(self) -> list[JournalEntry]:
        return [entry for entry in self.journal if entry.kind.value == "effect"]


def capture(
    app: Tether, principal: Principal, run_id: str, case_id: str, service: CaseService
) -> CaseRun:
    return CaseRun(
        case_id=case_id,
        run=app.runs.get(principal, run_id),
        events=app.runs.events(principal, run_id),
        checkpoints=app.runs.checkpoints(principal, run_id),
        journal=app.runs.journal(principal, run_id),
        waits=app.runs.waits(principal, status=None, run_id=run_id),
        state=app.runs.state(principal, run_id),
        calls=service.calls_by_key(),
        case=service.get_case(case_id),
        notes=service.notes(case_id),
    )


@dataclass(frozen=True)
class MemoryWrite:
    """A proposal a run made, the policy's decision, and the memory as stored."""

    case_id: str
    run_id: str
    proposal: MemoryProposal
    decision: PolicyDecision
    stored: MemoryRecord | None


@dataclass(frozen=True)
class RunRows:
    """How much of a run is stored: its rows per table, and its effects' keys."""

    events: int
    checkpoints: int
    journal: int
    effect_keys: tuple[str, ...]


def run_rows(app: Tether, principal: Principal, run_id: str) -> RunRows:
    journal = app.runs.journal(principal, run_id)
    return RunRows(
        events=len(app.runs.events(principal, run_id)),
        checkpoints=len(app.runs.checkpoints(principal, run_id)),
        journal=len(journal),
        effect_keys=tuple(e.idempotency_key for e in journal if e.kind.value == "effect"),
    )


@dataclass(frozen=True)
class RetentionPass:
    """A housekeeping pass run at ``at`` (a clock moved past every retention period)."""

    at: datetime
    run_policies: dict[str, int]
    held_runs: dict[str, str]
    report: PassReport
    rows_before: dict[str, RunRows]
    rows_after: dict[str, RunRows]
    memory_after: dict[str, MemoryRecord | None]


@dataclass
class DemoRecord:
    """Everything the report is generated from."""

    url: str
    tenant: str
    cases: dict[str, CaseRun] = field(default_factory=dict)
    killed: dict[str, int] = field(default_factory=dict)
    memory: list[MemoryWrite] = field(default_factory=list)
    policy: PolicyConfig | None = None
    retention: RetentionPass | None = None
