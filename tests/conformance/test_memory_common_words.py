"""The ranked full-text search leaves out a word that too many memories of a scope hold
when the query has a rarer one (``COMMON_WORD_MEMORIES``, lowered here to 3), so a
recall does not score a posting list of most of the scope; when every word is that
common, all of them are searched (both backends)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.memory.text import scope_key
from tether.storage import _memory_ops

BUSY = {
    "harbour": "a claim about the harbour fee",
    "window": "the claim for a broken window",
    "lantern": "one claim on the lantern repair",
    "spring": "a claim filed late in spring",
    "strings": "the claim for new violin strings",
}
"""Five memories of scope u-1 holding ``claim``: more than the lowered cut-off."""

QUIET = {"lessons": "violin lessons on tuesday evenings"}


@pytest.fixture
def app(backend: TestDatabase, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tether]:
    monkeypatch.setattr(_memory_ops, "COMMON_WORD_MEMORIES", 3)
    with Tether.open(backend.settings(), clock=FakeClock(), embedder=HashingEmbedder()) as app:
        app.tenants.create("acme", admin="alice")
        yield app


def remember(app: Tether, scope_id: str, texts: dict[str, str]) -> dict[str, str]:
    """Store ``texts`` in user scope ``scope_id``; their names by memory id."""
    who = app.tenants.principal("acme", "alice")
    names = {}
    for name, text in texts.items():
        proposal = MemoryProposal(
            text=text, scope=Scope.USER, scope_id=scope_id, source_type=SourceType.HUMAN
        )
        decision = app.memory.propose(who, proposal)
        assert decision.memory_id is not None, name
        names[decision.memory_id] = name
    return names


def found(app: Tether, names: dict[str, str], words: list[str], scopes: Sequence[str]) -> set[str]:
    with app.storage.transaction("acme", write=False) as txn:
        hits = txn.search_memory_candidates("acme", words=words, scopes=scopes, limit=20)
    return {names[candidate.memory_id] for candidate, _ in hits}


def test_a_common_word_is_left_out_when_the_query_has_a_rarer_one(app: Tether) -> None:
    names = remember(app, "u-1", BUSY) | remember(app, "u-1", QUIET)
    one = [scope_key(Scope.USER, "u-1")]

    # `violin` (2 memories) decides the candidates; `claim` (5) is left out.
    assert found(app, names, ["claim", "violin"], one) == {"strings", "lessons"}
    # Every word common: all are searched, so every memory holding one is a candidate.
    assert found(app, names, ["claim"], one) == set(BUSY)
    # A word no memory holds is not a rarer word: the common one is still searched.
    assert found(app, names, ["claim", "zeppelin"], one) == set(BUSY)
    # A word under the cut-off is searched as before.
    assert found(app, names, ["harbour", "violin"], one) == {"harbour", "strings", "lessons"}


def test_a_word_is_common_in_one_scope_and_not_in_another(app: Tether) -> None:
    names = remember(app, "u-1", BUSY) | remember(app, "u-1", QUIET)
    names |= remember(app, "u-2", {"garden": "a claim for the garden wall"})
    both = [scope_key(Scope.USER, "u-1"), scope_key(Scope.USER, "u-2")]

    # `claim` is left out of u-1 only: u-2 holds it once, so u-2's memory is found by it.
    assert found(app, names, ["claim", "violin"], both) == {"strings", "lessons", "garden"}


def test_recall_ranks_by_the_rarer_word(app: Tether) -> None:
    remember(app, "u-1", BUSY)
    remember(app, "u-1", QUIET)
    who = app.tenants.principal("acme", "alice")

    result = app.memory.recall(
        who, "claim for violin", [(Scope.USER, "u-1")], limit=3, mode="lexical"
    )

    texts = {hit.record.text for hit in result.hits}
    assert texts == {BUSY["strings"], QUIET["lessons"]}
