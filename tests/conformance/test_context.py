"""The context builder on every backend: budgets kept to the token, summary head,
observation masking, constraints that always make it in, and the run's task state."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from pydantic import BaseModel

from tests.memory_support import create_tenant, propose
from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.context.models import ContextOptions
from tether.errors import ContextOverBudget
from tether.memory.models import MemoryKind, Scope
from tether.principals import Principal
from tether.runs import END, Workflow
from tether.threads.models import NewTurn, TurnKind, TurnRole
from tether.threads.tokens import load_default_counter

NO_RECALL = ContextOptions(recall=False)


@pytest.fixture
def world(backend: TestDatabase) -> Iterator[tuple[Tether, dict[str, Principal]]]:
    with Tether.open(backend.settings(embedder="none"), clock=FakeClock()) as app:
        yield app, create_tenant(app, "acme")


def conversation(app: Tether, agent: Principal, turns: int) -> str:
    thread = app.threads.create(agent, "u-1")
    app.threads.append_many(
        agent,
        thread.thread_id,
        [
            NewTurn(
                role=TurnRole.USER if n % 2 else TurnRole.ASSISTANT,
                content=f"Turn {n}: the claimant's bicycle frame number is F-{n * 37}.",
            )
            for n in range(1, turns + 1)
        ],
    )
    return thread.thread_id


def test_the_default_counter_is_a_real_tokenizer() -> None:
    counter = load_default_counter()

    assert not counter.approximate
    assert counter.count("tokenization") == 2  # WordPiece: token ##ization


def test_a_context_fits_its_budget_to_the_token(world: tuple[Tether, dict[str, Principal]]) -> None:
    app, people = world
    agent = people["agent"]
    thread_id = conversation(app, agent, 12)
    procedures = ["Deploy to staging first.", "Ask before any destructive command."]

    full = app.context.build(
        agent, thread_id, budget=100_000, procedures=procedures, options=NO_RECALL
    )
    exact = app.context.build(
        agent, thread_id, budget=full.tokens, procedures=procedures, options=NO_RECALL
    )
    short = app.context.build(
        agent, thread_id, budget=full.tokens - 1, procedures=procedures, options=NO_RECALL
    )

    assert full.turns == (1, 12) and full.dropped == []
    assert full.tokens == app.threads.counter.count(full.text)
    assert exact.text == full.text and exact.tokens == full.tokens
    assert short.tokens <= full.tokens - 1
    assert short.tokens == app.threads.counter.count(short.text)
    assert short.turns == (2, 12)
    assert [d.what for d in short.dropped] == ["turns 1-1"]
    assert all(p in short.text for p in procedures)
    assert sum(s.tokens for s in full.sections) == full.tokens


def test_sliding_window_keeps_the_newest_turns_and_never_exceeds(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    thread_id = conversation(app, people["agent"], 300)

    for budget in (40, 97, 250, 1000):
        built = app.context.build(
            people["agent"], thread_id, budget=budget, options=ContextOptions(page=16, recall=False)
        )
        assert built.tokens <= budget
        assert built.tokens == app.threads.counter.count(built.text)
        assert built.turns is not None and built.turns[1] == 300
        assert "Turn 300:" in built.text and "Turn 1:" not in built.text


def test_mandatory_parts_over_the_budget_are_refused(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    thread_id = conversation(app, people["agent"], 3)

    with pytest.raises(ContextOverBudget):
        app.context.build(
            people["agent"], thread_id, budget=10, procedures=["word " * 50], options=NO_RECALL
        )


def test_a_latest_turn_larger_than_the_budget_is_left_out_and_said_so(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    agent = people["agent"]
    thread_id = conversation(app, agent, 2)
    app.threads.append(agent, thread_id, NewTurn(role=TurnRole.USER, content="long " * 500))

    built = app.context.build(
        agent, thread_id, budget=100, procedures=["Be brief."], options=NO_RECALL
    )

    assert built.turns is None and "Be brief." in built.text
    assert built.tokens <= 100
    assert [d.reason for d in built.dropped] == ["not even the latest turn fits the budget"]


def test_a_masked_observation_is_retrieved_back_by_its_reference(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    agent = people["agent"]
    thread = app.threads.create(agent, "u-1")
    output = "\n".join(f"row {n}: invoice INV-{n} paid in full" for n in range(200))
    app.threads.append_many(
        agent,
        thread.thread_id,
        [
            NewTurn(role=TurnRole.USER, content="List the invoices."),
            NewTurn(
                role=TurnRole.ASSISTANT, kind=TurnKind.TOOL_CALL, content="invoices()", ref="c-7"
            ),
            NewTurn(role=TurnRole.TOOL, kind=TurnKind.OBSERVATION, content=output, ref="c-7"),
            NewTurn(role=TurnRole.ASSISTANT, content="All 200 invoices are paid."),
        ],
    )

    built = app.context.build(
        agent, thread.thread_id, budget=400, options=ContextOptions(mask_observations_over=100)
    )

    assert built.turns == (1, 4)
    assert "INV-150" not in built.text
    [masked] = built.masked
    assert masked.ref == "c-7" and masked.seq == 3 and masked.tokens > 100
    assert f"turn_id {masked.turn_id}" in built.text and "ref c-7" in built.text
    assert app.threads.get_turn(agent, masked.turn_id).content == output
    observations = [
        t
        for t in app.threads.find_turns(agent, thread.thread_id, "c-7")
        if t.kind is TurnKind.OBSERVATION
    ]
    assert [t.content for t in observations] == [output]


def test_summary_head_folds_the_oldest_turns_every_n(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    agent = people["agent"]
    thread_id = conversation(app, agent, 50)
    options = ContextOptions(summary_every=10, summary_tokens=120, recall=False)

    built = app.context.build(agent, thread_id, budget=2000, options=options)

    [summary] = app.threads.summaries(agent, thread_id)
    assert (summary.from_seq, summary.to_seq) == (1, 40)
    assert built.summary_id == summary.summary_id
    assert built.turns == (41, 50)
    assert "Summary of earlier turns (turns 1-40" in built.text
    assert summary.tokens <= 120
    assert len(app.threads.turns(agent, thread_id)) == 50

    app.threads.append(agent, thread_id, NewTurn(role=TurnRole.USER, content="one more"))
    app.context.build(agent, thread_id, budget=2000, options=options)
    assert len(app.threads.summaries(agent, thread_id)) == 1


def test_every_constraint_is_present_when_more_relevant_memories_compete(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    agent, olga = people["agent"], people["olga"]
    thread_id = conversation(app, agent, 4)
    for n in range(40):
        propose(app, olga, f"The bicycle claim note {n}: frame repair quote", Scope.USER, "u-1")
    propose(
        app,
        olga,
        "Never pay out more than 500 EUR without a supervisor",
        Scope.USER,
        "u-1",
        kind=MemoryKind.CONSTRAINT,
    )

    built = app.context.build(
        agent,
        thread_id,
        budget=800,
        query="bicycle claim frame repair quote",
        options=ContextOptions(memory_limit=5),
    )

    assert "Never pay out more than 500 EUR" in built.text
    constraints = next(s for s in built.sections if s.name == "constraints")
    assert constraints.items == 1
    memories = next(s for s in built.sections if s.name == "memories")
    assert 1 <= memories.items <= 5
    assert "untrusted context" in built.text and "confidence" in built.text
    assert built.tokens <= 800


class Claim(BaseModel):
    claim_id: str
    stage: str = "intake"


claims = Workflow("claims", state=Claim)


@claims.node(start=True)
def intake(ctx: object, state: Claim) -> str:
    return END


def test_the_runs_task_state_is_included(world: tuple[Tether, dict[str, Principal]]) -> None:
    app, people = world
    agent = people["agent"]
    thread_id = conversation(app, agent, 3)
    run = app.runs.start(agent, claims, Claim(claim_id="C-1001"))

    built = app.context.build(agent, thread_id, budget=500, run_id=run.run_id, options=NO_RECALL)

    task = next(s for s in built.sections if s.name == "task")
    assert task.tokens > 0
    assert f"run {run.run_id}" in built.text and "C-1001" in built.text


class NewlineCounter:
    """A counter whose newlines cost a token: counts do not add up over lines, so the
    builder's plan falls short and the assembled text must be trimmed."""

    id = "words-and-newlines"
    approximate = False

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


def test_a_counter_that_does_not_add_up_is_still_kept_within_budget(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    app, people = world
    app.threads.counter = NewlineCounter()
    thread_id = conversation(app, people["agent"], 40)

    built = app.context.build(people["agent"], thread_id, budget=150, options=NO_RECALL)

    assert built.tokens == NewlineCounter().count(built.text) <= 150
    assert built.counter == "words-and-newlines"
    assert any(d.reason == "over the budget once assembled" for d in built.dropped)
    assert built.turns is not None and built.turns[1] == 40


def test_the_published_procedures_head_the_context_by_default(
    world: tuple[Tether, dict[str, Principal]],
) -> None:
    from pathlib import Path

    app, people = world
    thread_id = conversation(app, people["agent"], 4)
    examples = Path(__file__).resolve().parents[2] / "examples" / "procedures"
    before = app.context.build(people["agent"], thread_id, budget=2000, options=NO_RECALL)
    app.procedures.publish(people["alice"], examples)

    after = app.context.build(people["agent"], thread_id, budget=2000, options=NO_RECALL)
    none = app.context.build(
        people["agent"], thread_id, budget=2000, procedures=(), options=NO_RECALL
    )

    assert "Procedures" not in before.text and "Procedures" not in none.text
    assert after.sections[0].name == "procedures"
    assert "Deploy to staging" in after.text
    assert "never-delete-production-data" in after.text
