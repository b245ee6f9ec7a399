"""Bad input to the run API gets a clear error and changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import (
    PAST_LEASE,
    TENANT,
    CaseService,
    Crash,
    FaultPlan,
    Harness,
    open_harness,
    open_wait,
)
from tests.support import TestDatabase, auditor
from tether.errors import Conflict, InvalidInput, NotFound
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class ClaimState(BaseModel):
    claim_id: str
    amount: int = 0
    answer: str | None = None


def claim_workflow() -> Workflow[ClaimState]:
    wf: Workflow[ClaimState] = Workflow("claim", state=ClaimState)

    @wf.node
    def ask(ctx: RunContext, s: ClaimState) -> str:
        s.answer = ctx.interrupt("clarification_required", "which policy?")
        return END

    return wf


def everything(h: Harness) -> tuple[Any, ...]:
    """All runs of the tenant with their stored rows, and the audit trail."""
    runs = h.app.runs.all(h.admin, limit=1000)
    return (
        runs,
        [h.snapshot(run.run_id)[1:5] for run in runs],
        h.app.audit.entries(auditor(TENANT), limit=10_000),
    )


def test_an_unknown_workflow_is_not_found(h: Harness) -> None:
    registry = WorkflowRegistry(claim_workflow())

    with pytest.raises(NotFound, match="no workflow named 'nope'"):
        registry.get("nope")
    with pytest.raises(NotFound, match="claim@7 is not registered"):
        registry.get("claim", 7)
    assert registry.get("claim").key == "claim@1"


def test_unknown_and_malformed_run_ids_are_refused(h: Harness) -> None:
    registry = WorkflowRegistry(claim_workflow())
    h.app.runs.start(h.agent, registry.get("claim"), ClaimState(claim_id="C-1"))
    before = everything(h)
    unknown = str(uuid.UUID(int=0x0190_0000_0000_7000_8000_0000_0000_0001))

    for call in (
        lambda run_id: h.app.runs.get(h.admin, run_id),
        lambda run_id: h.app.runs.state(h.admin, run_id),
        lambda run_id: h.app.runs.events(h.admin, run_id),
        lambda run_id: h.app.runbook.cancel(h.operator, run_id, reason="test"),
        lambda run_id: h.app.runbook.resume(h.operator, run_id, reason="test"),
    ):
        with pytest.raises(NotFound, match="does not exist"):
            call(unknown)
        with pytest.raises(InvalidInput, match="not a valid id"):
            call("run-42")
    with pytest.raises(NotFound):
        h.executor(registry, "worker-1").execute(TENANT, unknown)
    with pytest.raises(InvalidInput, match="not a valid id"):
        h.app.runs.start(h.agent, registry.get("claim"), {"claim_id": "C-2"}, run_id="run-42")

    assert everything(h) == before


@pytest.mark.parametrize(
    "state",
    [{"amount": 5}, {"claim_id": "C-1", "amount": "a lot"}, {"claim_id": ["C-1"]}],
    ids=["missing-field", "wrong-type", "wrong-shape"],
)
def test_an_invalid_initial_state_creates_no_run(h: Harness, state: dict[str, Any]) -> None:
    wf = claim_workflow()
    before = everything(h)

    with pytest.raises(InvalidInput, match="invalid state for workflow claim@1"):
        h.app.runs.start(h.agent, wf, state)

    assert everything(h) == before
    assert h.app.runs.all(h.admin) == []


def test_a_finished_run_cannot_be_resumed(h: Harness) -> None:
    registry = WorkflowRegistry(claim_workflow())
    run = h.app.runs.start(h.agent, registry.get("claim"), ClaimState(claim_id="C-1"))
    worker = h.executor(registry, "worker-1")
    h.app.runs.answer(h.operator, open_wait(h, worker.execute(TENANT, run.run_id)).wait_id, "P-7")
    assert worker.execute(TENANT, run.run_id).status is RunStatus.COMPLETED
    before = everything(h)

    with pytest.raises(Conflict, match="completed"):
        h.app.runbook.resume(h.operator, run.run_id, reason="test")
    with pytest.raises(Conflict, match="completed"):
        h.app.runbook.cancel(h.operator, run.run_id, reason="test")
    assert worker.execute(TENANT, run.run_id).status is RunStatus.COMPLETED

    assert everything(h) == before


def test_answering_an_unknown_or_malformed_wait_is_refused(h: Harness) -> None:
    registry = WorkflowRegistry(claim_workflow())
    run = h.app.runs.start(h.agent, registry.get("claim"), ClaimState(claim_id="C-1"))
    waiting = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    before = everything(h)
    unknown = str(uuid.UUID(int=0x0190_0000_0000_7000_8000_0000_0000_0002))

    with pytest.raises(NotFound, match="no interrupt or approval"):
        h.app.runs.answer(h.operator, unknown, "P-7")
    with pytest.raises(NotFound, match="no interrupt or approval"):
        h.app.runs.decide(h.approver, unknown, approve=True)
    with pytest.raises(InvalidInput, match="not a valid id"):
        h.app.runs.answer(h.operator, "wait-1", "P-7")
    with pytest.raises(InvalidInput, match="answer it instead"):
        h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=True)

    assert everything(h) == before
    assert h.run(run.run_id).status is RunStatus.WAITING_FOR_USER


class NoteState(BaseModel):
    note: dict[str, Any] | None = None


@pytest.mark.parametrize("answer", ["it went out fine", ["retry"]], ids=["text", "list"])
def test_a_malformed_answer_to_an_unknown_effect_review_is_refused(h: Harness, answer: Any) -> None:
    """The review asks for {"result": ...} or {"retry": true}; anything else must be
    refused up front rather than accepted and then crash the node (failing the run)."""
    service = CaseService()
    wf: Workflow[NoteState] = Workflow("note", state=NoteState)

    @wf.node
    def note(ctx: RunContext, s: NoteState) -> str:
        s.note = ctx.effect(
            "create_case_note",
            lambda key: service.call(key, "create_case_note", {}),
            request={},
        )
        return END

    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, NoteState())
    with pytest.raises(Crash):
        h.executor(registry, "worker-1", faults=FaultPlan(crash_at=2)).execute(TENANT, run.run_id)
    h.clock.advance(PAST_LEASE)
    paused = h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    review = open_wait(h, paused)
    before = everything(h)

    with pytest.raises(InvalidInput):
        h.app.runs.answer(h.operator, review.wait_id, answer)

    assert everything(h) == before
    assert h.run(run.run_id).status is RunStatus.PAUSED
    assert list(service.calls.values()) == [1]


def test_a_run_id_already_taken_is_refused_and_changes_nothing(h: Harness) -> None:
    registry = WorkflowRegistry(claim_workflow())
    taken = str(uuid.uuid4())
    h.app.runs.start(h.agent, registry.get("claim"), {"claim_id": "C-1"}, run_id=taken)
    before = everything(h)

    with pytest.raises(Conflict, match=f"run {taken} already exists"):
        h.app.runs.start(h.agent, registry.get("claim"), {"claim_id": "C-2"}, run_id=taken)

    assert everything(h) == before
    assert h.state(taken) == {"claim_id": "C-1", "amount": 0, "answer": None}
