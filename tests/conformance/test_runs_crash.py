"""Crash at every persistence boundary of a case review; the run finishes, nothing repeats.

The workflow: load case -> retrieve policy -> ask for missing evidence -> draft a
recommendation (a fake model call) and create a case note (an effect) -> supervisor
approval -> revalidate and finalise (an approval-gated effect with a guard). A run without
crash counts the boundaries; then, for each boundary, a fresh run crashes there (the
executor is abandoned, as after ``kill -9``), the lease runs out, and a new worker with
another identity carries the run to the end, a supervisor answering whatever it waits on.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
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
from tests.support import TestDatabase
from tether.errors import PermissionDenied
from tether.runs import (
    END,
    ApprovalDecision,
    InterruptReason,
    Run,
    RunContext,
    RunStatus,
    Workflow,
    WorkflowRegistry,
)
from tether.runs.claim import idempotency_key

MODES = ["retry_safe", "review", "reconcile"]
TIMEOUT_S = 10.0


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class CaseState(BaseModel):
    case_id: str
    case: dict[str, Any] | None = None
    policy: dict[str, Any] | None = None
    evidence: str | None = None
    draft: str | None = None
    note: dict[str, Any] | None = None
    decision: dict[str, Any] | None = None
    final: dict[str, Any] | None = None


@dataclass
class World:
    """Everything outside the engine the workflow talks to."""

    service: CaseService
    model_calls: int = 0
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)

    def model(self) -> str:
        self.model_calls += 1
        return f"recommend approval (draft {self.model_calls})"


def finalise_action(state: CaseState) -> dict[str, Any]:
    return {"case_id": state.case_id, "outcome": "approve claim", "amount": 1200}


def case_review(world: World, mode: str) -> Workflow[CaseState]:
    """The case-review workflow; ``mode`` says how its effects settle an unknown outcome."""
    service = world.service
    options: dict[str, Any] = {
        "retry_safe": {"retry_safe": True},
        "review": {},
        "reconcile": {"reconcile": service.lookup},
    }[mode]
    wf: Workflow[CaseState] = Workflow("case_review", state=CaseState)

    @wf.node(start=True)
    def load_case(ctx: RunContext, s: CaseState) -> str:
        s.case = ctx.step("load_case", lambda: dict(world.cases[s.case_id]))
        return "retrieve_policy"

    @wf.node
    def retrieve_policy(ctx: RunContext, s: CaseState) -> str:
        s.policy = ctx.step("retrieve_policy", lambda: {"policy": "P-7", "version": 3})
        return "check_evidence"

    @wf.node
    def check_evidence(ctx: RunContext, s: CaseState) -> str:
        if s.case is not None and not s.case["evidence"]:
            s.evidence = ctx.interrupt(
                InterruptReason.CLARIFICATION_REQUIRED,
                "The medical report is missing; upload it",
                payload={"case_id": s.case_id},
            )
        return "draft"

    @wf.node
    def draft(ctx: RunContext, s: CaseState) -> str:
        s.draft = ctx.step("draft_recommendation", world.model)
        note = {"case_id": s.case_id, "text": s.draft}
        s.note = ctx.effect(
            "create_case_note",
            lambda key: service.call(key, "create_case_note", note),
            request=note,
            **options,
        )
        return "approval"

    @wf.node
    def approval(ctx: RunContext, s: CaseState) -> str:
        decision = ctx.approval(
            finalise_action(s),
            rationale=s.draft or "",
            evidence=[s.evidence or ""],
            risk="high",
            on_approve="the claim is paid",
            on_reject="the case goes back to the handler",
        )
        s.decision = decision.model_dump(mode="json")
        return "finalise"

    @wf.node
    def finalise(ctx: RunContext, s: CaseState) -> str:
        decision = ApprovalDecision.model_validate(s.decision)
        action = finalise_action(s)
        s.final = ctx.effect(
            "finalise_case",
            lambda key: service.call(key, "finalise_case", action),
            request=action,
            approval=decision,
            guard=lambda: None if s.case_id in service.open_cases else "the case is closed",
            **options,
        )
        return END

    return wf


@dataclass
class Outcome:
    run: Run
    reviews: list[tuple[str, int, dict[str, Any]]]
    """(key, calls of that key when the run paused, the operator's answer)."""
    owners: list[str]


def new_world(h: Harness, case_id: str) -> World:
    world = World(CaseService(recorded=h.recorded))
    world.cases[case_id] = {"case_id": case_id, "claimant": "C. Doe", "evidence": []}
    world.service.open_cases.add(case_id)
    return world


def drive(
    h: Harness, registry: WorkflowRegistry, run_id: str, world: World, plan: FaultPlan
) -> Outcome:
    """Run to the end: crash when the plan says, then continue on a new worker."""
    numbers = itertools.count(1)
    owners = [f"worker-{next(numbers)}"]
    executor = h.executor(registry, owners[-1], faults=plan)
    reviews: list[tuple[str, int, dict[str, Any]]] = []
    for _ in range(30):
        try:
            run = executor.execute(TENANT, run_id)
        except Crash:
            h.clock.advance(PAST_LEASE)
            owners.append(f"worker-{next(numbers)}")
            executor = h.executor(registry, owners[-1], faults=plan)
            continue
        if run.status is RunStatus.COMPLETED:
            return Outcome(run, reviews, owners)
        wait = open_wait(h, run)
        if run.status is RunStatus.WAITING_FOR_USER:
            h.app.runs.answer(h.operator, wait.wait_id, "medical report MR-1")
        elif run.status is RunStatus.WAITING_FOR_APPROVAL:
            h.app.runs.decide(h.approver, wait.wait_id, approve=True, comment="fine")
        elif run.status is RunStatus.PAUSED:
            assert wait.reason is InterruptReason.HUMAN_REVIEW
            key = wait.request["idempotency_key"]
            if key in world.service.applied:
                answer: dict[str, Any] = {"result": world.service.lookup(key)}
            else:
                answer = {"retry": True}
            reviews.append((key, world.service.calls[key], answer))
            h.app.runs.answer(h.operator, wait.wait_id, answer)
        else:
            pytest.fail(f"unexpected status {run.status} ({run.error})")
    pytest.fail(f"run {run_id} did not finish")


def start(h: Harness, wf: Workflow[CaseState], case_id: str) -> Run:
    return h.app.runs.start(h.agent, wf, CaseState(case_id=case_id))


EXPECTED_BOUNDARIES = [
    ("before_checkpoint", "load_case"),
    ("after_checkpoint", "load_case"),
    ("before_checkpoint", "retrieve_policy"),
    ("after_checkpoint", "retrieve_policy"),
    ("before_checkpoint", "check_evidence"),
    ("after_checkpoint", "check_evidence"),
    ("before_intent", "create_case_note"),
    ("after_intent", "create_case_note"),
    ("after_effect", "create_case_note"),
    ("after_result", "create_case_note"),
    ("before_checkpoint", "draft"),
    ("after_checkpoint", "draft"),
    ("before_checkpoint", "approval"),
    ("after_checkpoint", "approval"),
    ("before_intent", "finalise_case"),
    ("after_intent", "finalise_case"),
    ("after_effect", "finalise_case"),
    ("after_result", "finalise_case"),
    ("before_checkpoint", "finalise"),
    ("after_checkpoint", "finalise"),
]


def boundary_names(plan: FaultPlan) -> list[tuple[str, str]]:
    """The recorded boundaries with effect keys shortened to the effect's name."""
    return [(point, key.rsplit(":", 1)[-1]) for point, key in plan.seen]


def test_a_case_review_without_crash_passes_every_boundary_once(h: Harness) -> None:
    world = new_world(h, "case-0")
    registry = WorkflowRegistry(case_review(world, "review"))
    run = start(h, registry.get("case_review"), "case-0")
    plan = FaultPlan()

    outcome = drive(h, registry, run.run_id, world, plan)

    assert outcome.run.status is RunStatus.COMPLETED
    assert boundary_names(plan) == EXPECTED_BOUNDARIES
    assert outcome.reviews == []
    assert outcome.owners == ["worker-1"]
    assert sorted(world.service.calls.values()) == [1, 1]
    state = h.state(run.run_id)
    assert state["evidence"] == "medical report MR-1"
    assert state["note"]["text"] == state["draft"] == "recommend approval (draft 1)"
    assert state["final"]["outcome"] == "approve claim"
    assert state["decision"]["decided_by"] == h.approver.principal_id


def count_boundaries(h: Harness, mode: str) -> int:
    """Run the workflow once without a crash and count the boundaries it passes."""
    world = new_world(h, "case-count")
    registry = WorkflowRegistry(case_review(world, mode))
    run = start(h, registry.get("case_review"), "case-count")
    plan = FaultPlan()
    assert drive(h, registry, run.run_id, world, plan).run.status is RunStatus.COMPLETED
    assert boundary_names(plan) == EXPECTED_BOUNDARIES
    return len(plan.seen)


@pytest.mark.parametrize("mode", MODES)
def test_a_crash_at_any_boundary_never_repeats_a_recorded_effect(h: Harness, mode: str) -> None:
    count = count_boundaries(h, mode)
    for index in range(count):
        case_id = f"case-{index}"
        world = new_world(h, case_id)
        registry = WorkflowRegistry(case_review(world, mode))
        run = start(h, registry.get("case_review"), case_id)
        plan = FaultPlan(crash_at=index)

        outcome = drive(h, registry, run.run_id, world, plan)

        where = f"{mode}, crash {index} at {plan.crashed}"
        assert plan.crashed is not None, where
        point, crashed_key = plan.crashed
        assert outcome.run.status is RunStatus.COMPLETED, where
        assert h.run(run.run_id).status is RunStatus.COMPLETED, where
        assert len(outcome.owners) == 2, where
        service = world.service
        assert service.late_calls == [], f"{where}: called after its result was recorded"
        note_key, final_key = service.keys_for("create_case_note") + service.keys_for(
            "finalise_case"
        )
        assert sorted(service.applied) == sorted([note_key, final_key]), where

        unknown = point in ("after_intent", "after_effect")
        expected_calls = {note_key: 1, final_key: 1}
        if mode == "retry_safe" and point == "after_effect":
            expected_calls[crashed_key] = 2
        assert dict(service.calls) == expected_calls, where

        # After a takeover, "not applied yet" from reconcile does not prove the earlier
        # worker's call will not land later: an effect that is not retry-safe is reviewed.
        if (mode == "review" and unknown) or (mode == "reconcile" and point == "after_intent"):
            assert [review[:2] for review in outcome.reviews] == [
                (crashed_key, 1 if point == "after_effect" else 0)
            ], where
            answer = outcome.reviews[0][2]
            assert ("result" in answer) is (point == "after_effect"), where
        else:
            assert outcome.reviews == [], where
        settled = [e.data for e in h.events(run.run_id) if e.type == "effect.settled"]
        if mode == "reconcile" and point == "after_effect":
            assert settled == [
                {"name": crashed_key.rsplit(":", 1)[-1], "key": crashed_key, "by": "reconcile"}
            ], where
        elif mode == "review" and point == "after_effect":
            assert [s["by"] for s in settled] == ["operator"], where
        else:
            assert settled == [], where

        state = h.state(run.run_id)
        assert state["note"] == service.applied[note_key], where
        assert state["note"]["text"] == state["draft"], where
        assert state["final"] == service.applied[final_key], where
        assert state["evidence"] == "medical report MR-1", where
        assert h.event_types(run.run_id).count("run.completed") == 1, where
    assert h.app.audit.verify(TENANT).ok


@pytest.mark.parametrize("point", ["after_intent", "after_effect"])
def test_an_unknown_outcome_without_retry_or_reconcile_waits_for_a_person(
    h: Harness, point: str
) -> None:
    world = new_world(h, "case-r")
    registry = WorkflowRegistry(case_review(world, "review"))
    run = start(h, registry.get("case_review"), "case-r")
    index = EXPECTED_BOUNDARIES.index((point, "create_case_note"))
    plan = FaultPlan(crash_at=index)
    first = h.executor(registry, "worker-1", faults=plan)
    status = first.execute(TENANT, run.run_id).status
    assert status is RunStatus.WAITING_FOR_USER
    h.app.runs.answer(h.operator, open_wait(h, h.run(run.run_id)).wait_id, "report")
    with pytest.raises(Crash):
        first.execute(TENANT, run.run_id)
    key = plan.crashed[1] if plan.crashed else ""
    calls_at_crash = world.service.calls[key]

    h.clock.advance(PAST_LEASE)
    second = h.executor(registry, "worker-2")
    paused = second.execute(TENANT, run.run_id)

    assert paused.status is RunStatus.PAUSED
    wait = open_wait(h, h.run(run.run_id))
    assert wait.reason is InterruptReason.HUMAN_REVIEW
    assert wait.request == {"effect": "create_case_note", "idempotency_key": key}
    assert "effect.unknown" in h.event_types(run.run_id)
    assert world.service.calls[key] == calls_at_crash
    again = h.executor(registry, "worker-3").execute(TENANT, run.run_id)
    assert again.status is RunStatus.PAUSED
    assert world.service.calls[key] == calls_at_crash


def test_the_guard_refuses_to_finalise_a_case_closed_while_waiting_for_approval(
    h: Harness,
) -> None:
    world = new_world(h, "case-g")
    registry = WorkflowRegistry(case_review(world, "review"))
    run = start(h, registry.get("case_review"), "case-g")
    executor = h.executor(registry, "worker-1")
    executor.execute(TENANT, run.run_id)
    h.app.runs.answer(h.operator, open_wait(h, h.run(run.run_id)).wait_id, "report")
    waiting = executor.execute(TENANT, run.run_id)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL

    world.service.open_cases.discard("case-g")
    h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=True)
    refused = executor.execute(TENANT, run.run_id)

    assert refused.status is RunStatus.PAUSED
    wait = open_wait(h, refused)
    assert wait.reason is InterruptReason.HUMAN_REVIEW
    assert "the case is closed" in wait.message
    assert "effect.refused" in h.event_types(run.run_id)
    assert world.service.keys_for("finalise_case") == []


def test_a_retried_effect_whose_request_changed_since_its_intent_is_not_resent(
    h: Harness,
) -> None:
    """An intent records the request digest; the retry after a crash must not send a
    different request under the same idempotency key (the service would dedupe it and
    the run would record the old action's result as the new one's)."""
    service = CaseService()
    quotes = iter([100, 250])

    class PayState(BaseModel):
        paid: dict[str, Any] | None = None

    wf: Workflow[PayState] = Workflow("pay_once", state=PayState)

    @wf.node
    def pay(ctx: RunContext, s: PayState) -> str:
        amount = next(quotes)  # not journaled with ctx.step: differs on the re-run
        s.paid = ctx.effect(
            "pay",
            lambda key: service.call(key, "pay", {"amount": amount}),
            request={"amount": amount},
            retry_safe=True,
        )
        return END

    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, PayState())
    plan = FaultPlan(crash_at=2)
    with pytest.raises(Crash):
        h.executor(registry, "worker-1", faults=plan).execute(TENANT, run.run_id)
    assert plan.crashed is not None and plan.crashed[0] == "after_effect"
    h.clock.advance(PAST_LEASE)

    after = h.executor(registry, "worker-2").execute(TENANT, run.run_id)

    key = plan.crashed[1]
    assert service.calls[key] == 1, "the changed request was sent under the old key"
    assert after.status is RunStatus.PAUSED
    assert "workflow.changed" in h.event_types(run.run_id)


def test_an_effect_that_times_out_is_settled_like_a_crash(h: Harness) -> None:
    """``timeout_s``: "the outcome is then unknown and is settled like a crash" -- for an
    effect that is neither retry-safe nor reconcilable, that means a human review."""
    service = CaseService()
    release = threading.Event()

    class NoteState(BaseModel):
        note: dict[str, Any] | None = None

    def slow_service(key: str) -> dict[str, Any]:
        result = service.call(key, "create_case_note", {})
        release.wait(TIMEOUT_S)
        return result

    wf: Workflow[NoteState] = Workflow("slow_note", state=NoteState)

    @wf.node
    def note(ctx: RunContext, s: NoteState) -> str:
        s.note = ctx.effect("create_case_note", slow_service, request={}, timeout_s=0.05)
        return END

    run = h.app.runs.start(h.agent, wf, NoteState())
    try:
        after = h.executor(WorkflowRegistry(wf), "worker-1").execute(TENANT, run.run_id)
    finally:
        release.set()

    key = idempotency_key(TENANT, run.run_id, "note", 1, 1, "create_case_note")
    assert dict(service.calls) == {key: 1}
    assert after.status is RunStatus.PAUSED, f"the run is {after.status}: {after.error}"
    review = open_wait(h, after)
    assert review.reason is InterruptReason.HUMAN_REVIEW
    assert review.request == {"effect": "create_case_note", "idempotency_key": key}


def test_an_agent_cannot_settle_an_unknown_outcome_with_a_made_up_result(h: Harness) -> None:
    """The "did the effect happen?" review is a person's: an agent answering
    {"result": "tx-FAKE"} is refused, the run stays paused and the service is never asked
    again; a reviewer (not the run's starter) settles it."""
    world = new_world(h, "case-f")
    registry = WorkflowRegistry(case_review(world, "review"))
    run = start(h, registry.get("case_review"), "case-f")
    index = EXPECTED_BOUNDARIES.index(("after_intent", "create_case_note"))
    plan = FaultPlan(crash_at=index)
    first = h.executor(registry, "worker-1", faults=plan)
    first.execute(TENANT, run.run_id)
    h.app.runs.answer(h.operator, open_wait(h, h.run(run.run_id)).wait_id, "report")
    with pytest.raises(Crash):
        first.execute(TENANT, run.run_id)
    h.clock.advance(PAST_LEASE)
    h.executor(registry, "worker-2").execute(TENANT, run.run_id)
    review = open_wait(h, h.run(run.run_id))
    assert "idempotency_key" in review.request
    before = h.snapshot(run.run_id)

    for who in (h.agent, h.self_approving_agent):
        with pytest.raises(PermissionDenied):
            h.app.runs.answer(who, review.wait_id, {"result": "tx-FAKE"})

    assert h.snapshot(run.run_id) == before
    assert h.run(run.run_id).status is RunStatus.PAUSED
    h.app.runs.answer(h.approver, review.wait_id, {"retry": True})
    assert h.wait(review.wait_id).resolved_by == h.approver.principal_id
