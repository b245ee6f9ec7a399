"""The batch API on every backend: near-duplicates found through the nearest vectors
(with an embedder) or the narrow index queries (without), vectors of what was actually
stored (the redacted text), batched decisions, chunks pipelined with the embedder."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import StorageUnavailable
from tether.memory import ingest
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryProposal, Scope, SourceType, Verdict
from tether.memory.text import scope_key
from tether.principals import Principal

WORDS = [f"w{n}alpha" for n in range(30)]


@pytest.fixture(params=["vectors"])
def app(backend: TestDatabase, request: pytest.FixtureRequest) -> Iterator[Tether]:
    embedder = HashingEmbedder() if request.param == "vectors" else None
    with Tether.open(backend.settings(), clock=FakeClock(), embedder=embedder) as app:
        app.tenants.create("acme", admin="alice")
        app.tenants.grant(app.tenants.principal("acme", "alice"), "olga", ["operator"])
        yield app


def proposal(text: str, scope_id: str = "u-1") -> MemoryProposal:
    return MemoryProposal(
        text=text,
        scope=Scope.USER,
        scope_id=scope_id,
        source_type=SourceType.HUMAN,
        confidence=0.9,
    )


def olga(app: Tether) -> Principal:
    return app.tenants.principal("acme", "olga")


BOTH_WAYS = pytest.mark.parametrize("app", ["vectors", "text index"], indirect=True)


@BOTH_WAYS
@pytest.mark.parametrize(
    ("size", "missing", "reinforced"),
    [
        (6, 0, True),  # every word again (in another order): the all-words query
        (6, 1, False),  # 5/6 < 0.9
        (12, 1, True),  # 11/12: the all-but-one query
        (12, 2, False),  # 10/12
        (25, 2, True),  # 23/25: the any-word query, filtered
        (25, 3, False),  # 22/25 < 0.9
    ],
)
def test_a_near_duplicate_reinforces_at_every_text_length(
    app: Tether, size: int, missing: int, reinforced: bool
) -> None:
    first = app.memory.propose(olga(app), proposal(" ".join(WORDS[:size])))
    for other in range(5):
        app.memory.propose(olga(app), proposal(f"unrelated note {other} about w0alpha"))
    again = " ".join(reversed(WORDS[missing:size]))

    second = app.memory.propose(olga(app), proposal(again))

    if reinforced:
        assert (second.action, second.memory_id) == ("reinforced", first.memory_id)
    else:
        assert second.action == "created" and second.memory_id != first.memory_id


@BOTH_WAYS
def test_duplicates_within_one_batch_reinforce_and_other_scopes_do_not(app: Tether) -> None:
    text = "The claimant keeps the receipts in a blue folder"
    decisions = app.memory.propose_many(
        olga(app), [proposal(text), proposal(text), proposal(text, scope_id="u-2")]
    )

    assert [d.action for d in decisions] == ["created", "reinforced", "created"]
    assert decisions[1].memory_id == decisions[0].memory_id


def test_every_stored_vector_is_the_embedding_of_the_stored_text(app: Tether) -> None:
    texts = [
        "Contact the claimant at jan.devries@example.nl about the repair",
        "The claimant prefers calls in the morning",
        "My guess is the claimant is lying",
    ]
    batch = [proposal(texts[0]), proposal(texts[1])]
    batch.append(proposal(texts[2]).model_copy(update={"confidence": 0.3}))

    decisions = app.memory.propose_many(olga(app), batch)

    assert [d.verdict for d in decisions] == [Verdict.ALLOWED, Verdict.ALLOWED, Verdict.REFUSED]
    embedder = HashingEmbedder()
    with app.storage.transaction("acme", write=False) as txn:
        scopes = [scope_key("user", "u-1")]
        vectors = dict(txn.list_scope_vectors("acme", embedder_id=embedder.id, scopes=scopes))
        records = {r.memory_id: r for r in txn.get_memories("acme", list(vectors))}
    assert set(vectors) == {decisions[0].memory_id, decisions[1].memory_id}
    assert "jan.devries@example.nl" not in records[decisions[0].memory_id].text
    for memory_id, blob in vectors.items():
        stored = np.frombuffer(blob, dtype=np.float32)
        assert np.array_equal(stored, embedder.embed([records[memory_id].text])[0])


def test_every_decision_of_a_batch_is_logged(app: Tether) -> None:
    batch = [proposal(f"The claimant owns {n} bicycles and a van") for n in range(40)]
    guess = proposal("My guess is the claimant is lying")
    batch.append(guess.model_copy(update={"confidence": 0.3}))

    decisions = app.memory.propose_many(olga(app), batch)

    with app.storage.transaction("acme", write=False) as txn:
        rows = txn.connection.execute(
            "SELECT memory_id, verdict FROM memory_decisions WHERE tenant_id = 'acme'"
        ).fetchall()
    logged = sorted((row["memory_id"] or "", row["verdict"]) for row in rows)
    assert logged == sorted((d.memory_id or "", d.verdict.value) for d in decisions)


@BOTH_WAYS
def test_a_batch_written_in_chunks_deduplicates_across_them_and_recall_sees_each(
    app: Tether, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "CHUNK", 3)
    scopes = [(Scope.USER, "u-1")]
    mode = "lexical" if app.memory.embedder is None else "vector"
    app.memory.propose(olga(app), proposal("The adjuster visited the flat on Monday"))
    app.memory.recall(olga(app), "adjuster visit", scopes, mode=mode)  # caches the scope
    names = ["Anouk", "Bram", "Cees", "Daan", "Eva", "Fenna", "Gijs", "Hugo"]
    colours = ["amber", "blue", "cyan", "denim", "ebony", "fawn", "green", "hazel"]
    texts = [f"Claimant {n} owns an {c} bicycle" for n, c in zip(names, colours, strict=True)]

    decisions = app.memory.propose_many(
        olga(app), [proposal(t) for t in texts] + [proposal(texts[1]), proposal(texts[6])]
    )

    assert [d.action for d in decisions] == ["created"] * 8 + ["reinforced"] * 2
    assert [d.memory_id for d in decisions[8:]] == [decisions[1].memory_id, decisions[6].memory_id]
    for text, decision in zip(texts, decisions, strict=False):
        hits = app.memory.recall(olga(app), text, scopes, limit=1, mode=mode).hits
        assert [h.record.memory_id for h in hits] == [decision.memory_id]


class FailsOnItsSecondBatch(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        if self.calls == 2:
            raise StorageUnavailable("the embedding service went away")
        return super().embed(texts)


def test_a_failing_chunk_keeps_the_chunks_before_it(
    app: Tether, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "CHUNK", 2)
    app.memory.embedder = FailsOnItsSecondBatch()
    words = ("apple", "birch", "cedar", "dune")

    with pytest.raises(StorageUnavailable):
        app.memory.propose_many(olga(app), [proposal(f"Note {w} about the claim") for w in words])

    with app.storage.transaction("acme", write=False) as txn:
        stored = txn.list_memories(
            "acme", scopes=[scope_key("user", "u-1")], statuses=["active"], limit=10
        )
    assert sorted(r.text for r in stored) == [
        "Note apple about the claim",
        "Note birch about the claim",
    ]


SENTENCES = "The claimant owns a red van. She parks it behind the bakery. Her insurer is Acme."


def vectors_of(app: Tether, memory_id: str, embedder_id: str) -> list[Any]:
    with app.storage.transaction("acme", write=False) as txn:
        rows = txn.list_scope_vectors(
            "acme", embedder_id=embedder_id, scopes=[scope_key("user", "u-1")]
        )
    return [np.frombuffer(blob, dtype=np.float32) for found, blob in rows if found == memory_id]


def test_a_memory_of_several_sentences_has_a_vector_per_sentence_and_is_returned_once(
    app: Tether,
) -> None:
    decision = app.memory.propose(olga(app), proposal(SENTENCES))
    assert decision.memory_id is not None

    embedder = HashingEmbedder()
    whole, parking = embedder.embed([SENTENCES, "She parks it behind the bakery."])
    in_context = (parking + whole) / np.linalg.norm(parking + whole)
    stored = vectors_of(app, decision.memory_id, embedder.id)
    assert len(stored) == 4
    assert any(np.allclose(vector, whole) for vector in stored)
    assert any(np.allclose(vector, in_context, atol=1e-6) for vector in stored)
    hits = app.memory.recall(
        olga(app), "parks behind the bakery", [(Scope.USER, "u-1")], mode="vector"
    ).hits
    assert [h.record.memory_id for h in hits] == [decision.memory_id]


@pytest.mark.parametrize("app", ["text index"], indirect=True)
def test_reembed_gives_older_memories_their_sentence_vectors(app: Tether) -> None:
    decision = app.memory.propose(olga(app), proposal(SENTENCES))
    assert decision.memory_id is not None
    app.memory.embedder = HashingEmbedder()

    app.memory.reembed(olga(app))
    app.memory.reembed(olga(app))  # again: the parts are replaced, not added

    assert len(vectors_of(app, decision.memory_id, HashingEmbedder().id)) == 4


def test_the_word_match_finds_every_memory_holding_enough_of_the_words(app: Tether) -> None:
    """``match_memory_texts`` returns every memory of the scope holding at least
    ``at_least`` of the words, whatever their order and the other words around them, and
    none holding fewer (PostgreSQL counts each memory's words in one pass over the posting
    lists; SQLite matches every ``at_least``-word group)."""
    probe = ["harbour", "lantern", "meadow", "quartz", "violin"]
    texts = {
        "all": "violin quartz meadow lantern harbour",
        "four": "the quartz violin by the meadow harbour at dusk",
        "three": "a harbour lantern and a violin case",
        "two": "meadow and quartz only",
        "one": "a lonely lantern",
        "none": "nothing of the kind here",
    }
    ids = {}
    for name, text in texts.items():
        decision = app.memory.propose(olga(app), proposal(text))
        ids[str(decision.memory_id)] = name
    with app.storage.transaction("acme", write=False) as txn:
        for at_least, expected in [
            (5, {"all"}),
            (4, {"all", "four"}),
            (3, {"all", "four", "three"}),
            (1, {"all", "four", "three", "two", "one"}),
        ]:
            found = txn.match_memory_texts(
                "acme",
                words=probe,
                scopes=[scope_key(Scope.USER, "u-1")],
                at_least=at_least,
                limit=100,
            )
            assert {ids[m.memory_id] for m in found} == expected, at_least
            other = txn.match_memory_texts(
                "acme", words=probe, scopes=[scope_key(Scope.USER, "u-2")], at_least=1, limit=100
            )
            assert other == []
