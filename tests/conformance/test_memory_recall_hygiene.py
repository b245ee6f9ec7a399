"""Recall hygiene on every backend: no hit unrelated to the query unless asked, memories
contradicted below the tenant's confidence threshold left out and counted, and what a
memory is indexed with besides its text (context, episode, event time) found, explained
and never returned."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.memory_support import opened
from tests.support import TestDatabase
from tether import Tether
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.memory.policy import PolicyConfig
from tether.principals import Principal

SCOPE = [(Scope.USER, "u-1")]


class World:
    def __init__(self, app: Tether) -> None:
        self.app = app
        app.tenants.create("acme", admin="alice")
        admin = app.tenants.principal("acme", "alice")
        app.tenants.grant(admin, "agent", ["agent"])
        app.tenants.grant(admin, "sam", ["approver"])
        app.tenants.grant(admin, "alice", ["admin", "operator"])

    def who(self, name: str = "agent") -> Principal:
        return self.app.tenants.principal("acme", name)

    def propose(self, text: str, **fields: object) -> str:
        values: dict[str, object] = {
            "text": text,
            "scope": Scope.USER,
            "scope_id": "u-1",
            "source_type": SourceType.USER_MESSAGE,
            "confidence": 0.9,
        }
        values.update(fields)
        decision = self.app.memory.propose(self.who(), MemoryProposal(**values))  # type: ignore[arg-type]
        assert decision.memory_id is not None
        return decision.memory_id

    def texts(self, query: str, **options: object) -> list[str]:
        result = self.app.memory.recall(self.who(), query, SCOPE, **options)  # type: ignore[arg-type]
        return [hit.record.text for hit in result.hits]


@pytest.fixture(params=["hashing", "none"])
def world(backend: TestDatabase, request: pytest.FixtureRequest) -> Iterator[World]:
    with opened(backend, request.param) as app:
        yield World(app)


def test_recall_returns_no_hit_unrelated_to_the_query_unless_asked(world: World) -> None:
    world.propose("The claimant keeps the receipts in a blue folder")
    world.propose("Painting classes on Thursday evenings at the community hall")
    world.propose("The adjuster photographed water damage in the kitchen")

    result = world.app.memory.recall(world.who(), "receipts folder", SCOPE, limit=10)

    assert [h.record.text for h in result.hits] == [
        "The claimant keeps the receipts in a blue folder"
    ]
    if not result.lexical_only:
        assert result.filtered_out["unrelated to the query"] == 2
        everything = world.texts("receipts folder", limit=10, include_unrelated=True)
        assert len(everything) == 3
        assert everything[0] == "The claimant keeps the receipts in a blue folder"
    assert world.texts("zeppelin", limit=10) == []


def test_a_memory_contradicted_below_the_threshold_is_left_out_and_counted(
    world: World,
) -> None:
    memory_id = world.propose("The claimant prefers phone calls in the morning", confidence=0.9)
    world.app.memory.contradict(world.who(), memory_id)  # 0.9 -> 0.7: at the threshold
    assert world.texts("phone calls morning") == ["The claimant prefers phone calls in the morning"]

    world.app.memory.contradict(world.who(), memory_id)  # 0.7 -> 0.5: below it
    result = world.app.memory.recall(world.who(), "phone calls morning", SCOPE)

    assert result.hits == []
    assert result.filtered_out["contradicted below the confidence threshold"] == 1
    world.app.memory.confirm(world.who(), memory_id)
    world.app.memory.confirm(world.who(), memory_id)  # back to 0.7
    assert world.texts("phone calls morning") == ["The claimant prefers phone calls in the morning"]


def test_the_threshold_is_the_tenants_and_low_confidence_alone_filters_nothing(
    world: World,
) -> None:
    contradicted = world.propose("The claimant prefers phone calls in the morning")
    for _ in range(2):
        world.app.memory.contradict(world.who(), contradicted)  # 0.9 -> 0.5
    world.propose("The claimant prefers phone calls on Fridays", confidence=0.8)
    assert world.texts("phone calls") == ["The claimant prefers phone calls on Fridays"]

    world.app.memory.configure(world.who("alice"), PolicyConfig(confidence_threshold=0.5))
    assert sorted(world.texts("phone calls")) == [
        "The claimant prefers phone calls in the morning",
        "The claimant prefers phone calls on Fridays",
    ]
    world.app.memory.configure(world.who("alice"), PolicyConfig(confidence_threshold=0.95))
    assert world.texts("phone calls") == ["The claimant prefers phone calls on Fridays"]


def test_context_is_indexed_explained_never_returned_and_redacted(world: World) -> None:
    world.propose(
        "Sure, the blue one.",
        context="Which folder holds the receipts? Mail jane.roe@example.com about it.",
        episode="session-3",
    )
    world.propose("The adjuster photographed water damage in the kitchen")

    result = world.app.memory.recall(world.who(), "receipts folder", SCOPE)

    assert [h.record.text for h in result.hits] == ["Sure, the blue one."]
    assert result.hits[0].why["matched"].startswith("context")  # type: ignore[union-attr]
    assert result.hits[0].record.episode == "session-3"
    assert world.texts("jane roe example") == []


def test_episode_evidence_lifts_a_memory_whose_session_is_about_the_query(
    world: World,
) -> None:
    # Written first, so it would win a tie (ties go by memory id).
    world.propose("Yes, we booked the trip", episode="s-1")
    world.propose("Well, we booked the trip", episode="s-2")
    world.propose("The trip, the trip to Lisbon", episode="s-2")
    world.propose("A long note on travel: the trip insurance papers came by post", episode="s-3")

    result = world.app.memory.recall(world.who(), "booked trip", SCOPE)

    assert [h.record.text for h in result.hits[:2]] == [
        "Well, we booked the trip",
        "Yes, we booked the trip",
    ]
    assert float(result.hits[0].why["episode"]) > 0
    assert result.hits[1].why["episode"] == 0


def test_a_date_in_the_query_ranks_memories_of_that_time_first(world: World) -> None:
    world.propose("Went hiking with the dog", valid_from=datetime(2023, 6, 14, tzinfo=UTC))
    world.propose("Went hiking with the kids", valid_from=datetime(2023, 5, 8, tzinfo=UTC))

    result = world.app.memory.recall(world.who(), "hiking in May 2023", SCOPE)

    assert result.hits[0].record.text == "Went hiking with the kids"
    assert result.hits[0].why["time"] == "event time within 'may 2023'"
    assert "time" not in result.hits[1].why


def test_a_time_the_memory_names_counts_from_its_own_event_time(world: World) -> None:
    world.propose("Went to the fair with the kids", valid_from=datetime(2023, 5, 1, tzinfo=UTC))
    world.propose(
        "Went to the fair yesterday, great fun", valid_from=datetime(2023, 6, 2, tzinfo=UTC)
    )

    result = world.app.memory.recall(world.who(), "the fair on 1 June 2023", SCOPE)

    assert result.hits[0].record.text == "Went to the fair yesterday, great fun"
    assert result.hits[0].why["time"] == "names a time within '1 june 2023'"
    assert "time" not in result.hits[1].why


def test_a_question_that_asks_when_lifts_a_memory_that_says_when(world: World) -> None:
    world.propose("The piano lessons with Ana are fun", valid_from=datetime(2023, 5, 8, tzinfo=UTC))
    world.propose("Started piano lessons last week", valid_from=datetime(2023, 5, 8, tzinfo=UTC))

    result = world.app.memory.recall(world.who(), "When did I start piano lessons?", SCOPE)

    assert result.hits[0].record.text == "Started piano lessons last week"
    assert result.hits[0].why["time"] == "names a time ('last week') and the query asks when"
    assert "time" not in result.hits[1].why


def test_a_correction_keeps_the_episode_of_the_memory_it_corrects(world: World) -> None:
    memory_id = world.propose("We booked the trip to Porto", episode="s-7")

    decision = world.app.memory.correct(world.who("sam"), memory_id, "We booked the trip to Lisbon")

    assert decision.memory_id is not None
    assert world.app.memory.get(world.who(), decision.memory_id).episode == "s-7"
