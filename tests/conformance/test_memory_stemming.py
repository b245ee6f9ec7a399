"""The full-text index stems words on every backend (SQLite: Porter, memory migration
0002; PostgreSQL: the ``english`` configuration, memory migration 0003), so a question in
another word form finds the memory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.principals import Principal


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with Tether.open(backend.settings(), clock=FakeClock(), embedder=HashingEmbedder()) as app:
        app.tenants.create("acme", admin="alice")
        yield app


def remember(app: Tether, who: Principal, text: str) -> str:
    decision = app.memory.propose(
        who,
        MemoryProposal(
            text=text,
            scope=Scope.USER,
            scope_id="u-1",
            source_type=SourceType.HUMAN,
            confidence=0.9,
        ),
    )
    assert decision.memory_id is not None
    return decision.memory_id


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("Melanie painted a sunrise over the lake", "what paintings did she make"),
        ("Caroline went camping with her kids", "when does she camp"),
        ("The claimant owns two bicycles", "which bicycle does the claimant own"),
    ],
)
def test_recall_matches_other_forms_of_a_word(app: Tether, text: str, question: str) -> None:
    alice = app.tenants.principal("acme", "alice")
    memory_id = remember(app, alice, text)
    remember(app, alice, "The weather report mentions rain tomorrow")

    result = app.memory.recall(alice, question, [(Scope.USER, "u-1")], mode="lexical")

    assert [hit.record.memory_id for hit in result.hits] == [memory_id]
