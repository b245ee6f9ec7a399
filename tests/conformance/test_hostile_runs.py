"""Runs under hostile values: secrets in an effect's exception never reach the journal or
the events, and a state that cannot be stored faithfully fails the node instead of being
stored as something else."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, Harness, open_harness
from tests.support import TestDatabase
from tether.runs import END, RetryPolicy, RunContext, RunStatus, Workflow, WorkflowRegistry

TOKEN = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
PASSWORD = "Xy7/kQ9pLm2"


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Payment(BaseModel):
    to: str = "x"
    score: float = 0.0


def leaky_workflow() -> Workflow[Payment]:
    wf: Workflow[Payment] = Workflow("leaky", state=Payment)

    def call(key: str) -> object:
        raise ConnectionError(
            f"gateway said 401 for Authorization: Bearer {TOKEN} via "
            f"postgresql://svc:{PASSWORD}@pay.internal/db (user jane.doe@example.com)"
        )

    @wf.node(retry=RetryPolicy(max_attempts=1))
    def pay(ctx: RunContext, s: Payment) -> str:
        ctx.effect("pay", call, request={"to": s.to})
        return END

    return wf


def nan_workflow() -> Workflow[Payment]:
    wf: Workflow[Payment] = Workflow("nan", state=Payment)

    @wf.node(retry=RetryPolicy(max_attempts=1))
    def score(ctx: RunContext, s: Payment) -> str:
        s.score = float("nan")
        return END

    return wf


def test_an_effects_exception_text_is_stored_without_its_secrets(h: Harness) -> None:
    workflow = leaky_workflow()
    run = h.app.runs.start(h.agent, workflow, Payment())
    h.executor(WorkflowRegistry(workflow), "w1").execute(TENANT, run.run_id)

    finished = h.run(run.run_id)
    assert finished.status is RunStatus.FAILED
    stored = " ".join(
        [
            finished.error or "",
            *(entry.error or "" for entry in h.journal(run.run_id)),
            *(repr(event.data) for event in h.events(run.run_id)),
            h.app.runs.handoff(h.operator, run.run_id),
        ]
    )
    assert "ConnectionError" in stored
    for secret in (TOKEN, PASSWORD, "kQ9pLm2", "jane.doe@example.com"):
        assert secret not in stored


def test_a_node_that_sets_nan_fails_and_the_stored_state_keeps_its_number(h: Harness) -> None:
    workflow = nan_workflow()
    run = h.app.runs.start(h.agent, workflow, Payment(score=1.5))
    h.executor(WorkflowRegistry(workflow), "w1").execute(TENANT, run.run_id)

    finished = h.run(run.run_id)
    assert finished.status is RunStatus.FAILED
    assert "finite" in (finished.error or "")
    assert h.state(run.run_id)["score"] == 1.5


HOSTILE_TEXT = {"nul": "Ann\x00e", "lone surrogate": "Ann \udc80e"}


def hostile_workflow(where: str, text: str) -> Workflow[Payment]:
    wf: Workflow[Payment] = Workflow("hostile", state=Payment)

    @wf.node(retry=RetryPolicy(max_attempts=1))
    def pay(ctx: RunContext, s: Payment) -> str:
        if where == "state":
            s.to = text
        elif where == "state number":
            s.score = 2**70
        elif where == "step name":
            ctx.step(text, lambda: "looked up")
        elif where == "interrupt":
            ctx.interrupt("clarification_required", text)
        else:
            ctx.interrupt("clarification_required", "Which one?", payload={"seen": text})
        return END

    return wf


@pytest.mark.parametrize("text", HOSTILE_TEXT.values(), ids=HOSTILE_TEXT.keys())
@pytest.mark.parametrize("where", ["state", "state number"])
def test_a_state_that_cannot_be_stored_fails_its_node_on_both_backends(
    h: Harness, where: str, text: str
) -> None:
    workflow = hostile_workflow(where, text)
    run = h.app.runs.start(h.agent, workflow, Payment(to="Ann"))
    h.executor(WorkflowRegistry(workflow), "w1").execute(TENANT, run.run_id)

    finished = h.run(run.run_id)
    assert finished.status is RunStatus.FAILED
    field = "state.to" if where == "state" else "state.score"
    assert (finished.error or "").startswith(f"InvalidInput: {field} ")
    assert h.state(run.run_id) == {"to": "Ann", "score": 0.0}


@pytest.mark.parametrize("text", HOSTILE_TEXT.values(), ids=HOSTILE_TEXT.keys())
@pytest.mark.parametrize(
    ("where", "field"),
    [("step name", "name"), ("interrupt", "message"), ("interrupt payload", "request.seen")],
)
def test_hostile_text_a_node_hands_the_engine_fails_the_node_and_is_not_stored(
    h: Harness, where: str, field: str, text: str
) -> None:
    """Text a node hands the engine to store (a step's name, a question and what it
    shows) is checked when the node hands it over: the node fails as for a state that
    cannot be stored, on both backends, instead of the step being refused at every claim."""
    workflow = hostile_workflow(where, text)
    run = h.app.runs.start(h.agent, workflow, Payment(to="Ann"))
    h.executor(WorkflowRegistry(workflow), "w1").execute(TENANT, run.run_id)

    finished = h.run(run.run_id)
    assert finished.status is RunStatus.FAILED
    assert (finished.error or "").startswith(f"InvalidInput: {field} ")
    assert h.state(run.run_id) == {"to": "Ann", "score": 0.0}
    assert h.journal(run.run_id) == []
    assert h.waits(run.run_id) == []
    stored = repr([finished, h.events(run.run_id), h.checkpoints(run.run_id)])
    assert "Ann\\x00" not in stored and "\\udc80" not in stored
