"""Recall's fast path on every backend: the recall log and access counts are buffered and
written together by ``flush_access``, and the vector product computed on the recall
worker thread (while the full-text query runs) ranks exactly as the inline one."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import StorageUnavailable
from tether.memory import vectors
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType

SCOPES = [(Scope.USER, "u-1"), (Scope.CASE, "C-1")]
TEXTS = [
    "The claimant repaired the blue bicycle in March",
    "The claimant's bicycle was stolen from the station",
    "Case C-1 concerns water damage in the kitchen",
    "The adjuster visited the kitchen and took photos",
    "The claimant prefers phone calls in the morning",
    "A plumber confirmed the leaking pipe under the sink",
]


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with Tether.open(backend.settings(), clock=FakeClock(), embedder=HashingEmbedder()) as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.memory.propose_many(
            alice,
            [
                MemoryProposal(
                    text=text,
                    scope=scope,
                    scope_id=scope_id,
                    source_type=SourceType.HUMAN,
                    confidence=0.9,
                )
                for index, text in enumerate(TEXTS)
                for scope, scope_id in [SCOPES[index % 2]]
            ],
        )
        app.memory.propose(
            alice,
            MemoryProposal(
                text="Never call the claimant after 6 pm",
                kind=MemoryKind.CONSTRAINT,
                scope=Scope.USER,
                scope_id="u-1",
                source_type=SourceType.HUMAN,
                confidence=0.95,
            ),
        )
        yield app


def logged(backend: TestDatabase) -> list[tuple[str, str]]:
    with backend.raw() as raw:
        rows = raw.execute("SELECT recall_id, returned FROM memory_recalls ORDER BY recall_id")
    return [(str(recall_id), str(returned)) for recall_id, returned in rows]


def access_counts(backend: TestDatabase) -> dict[str, int]:
    with backend.raw() as raw:
        rows = raw.execute("SELECT memory_id, access_count FROM memories")
    return {str(memory_id): int(count) for memory_id, count in rows}


def test_every_recall_is_logged_once_its_buffer_is_flushed(
    app: Tether, backend: TestDatabase
) -> None:
    alice = app.tenants.principal("acme", "alice")
    app.memory.log_every = 3
    first = app.memory.recall(alice, "claimant bicycle", SCOPES)
    second = app.memory.recall(alice, "kitchen damage", SCOPES)
    assert logged(backend) == []

    third = app.memory.recall(alice, "plumber pipe", SCOPES)

    rows = dict(logged(backend))
    assert sorted(rows) == sorted(r.recall_id for r in (first, second, third))
    for result in (first, second, third):
        assert rows[result.recall_id] == (
            "[" + ",".join(f'"{h.record.memory_id}"' for h in result.hits) + "]"
        )
    counts = access_counts(backend)
    for hit in first.hits:
        assert counts[hit.record.memory_id] >= 1


def test_flush_access_writes_the_buffered_log_and_counts(
    app: Tether, backend: TestDatabase
) -> None:
    alice = app.tenants.principal("acme", "alice")
    result = app.memory.recall(alice, "claimant bicycle", SCOPES)
    assert result.hits

    app.memory.flush_access()

    assert [recall_id for recall_id, _ in logged(backend)] == [result.recall_id]
    counts = access_counts(backend)
    assert {h.record.memory_id for h in result.hits} == {m for m, c in counts.items() if c == 1}
    app.memory.flush_access()
    assert len(logged(backend)) == 1


def test_a_recall_of_another_tenant_is_logged_in_its_own_tenant(
    app: Tether, backend: TestDatabase
) -> None:
    app.tenants.create("globex", admin="alice")
    acme = app.memory.recall(app.tenants.principal("acme", "alice"), "bicycle", SCOPES)
    globex = app.memory.recall(app.tenants.principal("globex", "alice"), "bicycle", SCOPES)

    app.memory.flush_access()

    with backend.raw() as raw:
        rows = raw.execute("SELECT tenant_id, recall_id FROM memory_recalls")
    assert sorted((str(t), str(r)) for t, r in rows) == sorted(
        [("acme", acme.recall_id), ("globex", globex.recall_id)]
    )
    assert globex.hits == []


@pytest.mark.parametrize("mode", ["hybrid", "vector", "lexical"])
def test_vector_scores_on_the_worker_threads_rank_as_inline(
    app: Tether, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = app.tenants.principal("acme", "alice")
    queries = ["claimant bicycle stolen", "kitchen water damage photos", "phone calls"]

    def recall_all() -> list[list[tuple[str, MemoryKind, float, dict[str, float | str]]]]:
        return [
            [
                (h.record.memory_id, h.record.kind, h.score, h.why)
                for h in app.memory.recall(alice, query, SCOPES, mode=mode, limit=4).hits
            ]
            for query in queries
        ]

    monkeypatch.setattr(vectors, "PARALLEL_VECTOR_ROWS", 10**9)
    inline = recall_all()
    monkeypatch.setattr(vectors, "PARALLEL_VECTOR_ROWS", 1)
    monkeypatch.setattr(vectors, "BLOCK_ROWS", 2)  # several blocks, several threads
    threaded = recall_all()

    assert threaded == inline
    assert all(hits for hits in inline)
    assert all(any(kind is MemoryKind.CONSTRAINT for _, kind, _, _ in hits) for hits in inline), (
        "every active constraint of the scopes is returned"
    )


def test_filters_count_what_ranking_left_out(app: Tether) -> None:
    alice = app.tenants.principal("acme", "alice")

    result = app.memory.recall(alice, "claimant bicycle kitchen", SCOPES, limit=1)

    ranked = [h for h in result.hits if not h.why.get("constraint")]
    assert len(ranked) == 1
    assert result.filtered_out.get("below the top results", 0) >= 1
    assert ranked[0].record.text in TEXTS


def test_closing_the_application_writes_the_buffered_recall_log(backend: TestDatabase) -> None:
    with Tether.open(backend.settings(embedder="none"), clock=FakeClock()) as first:
        first.tenants.create("acme", admin="alice")
        alice = first.tenants.principal("acme", "alice")
        result = first.memory.recall(alice, "anything at all", SCOPES)
        assert logged(backend) == []

    assert [recall_id for recall_id, _ in logged(backend)] == [result.recall_id]


def test_a_memory_another_process_wrote_is_found_by_its_vector(backend: TestDatabase) -> None:
    """Two applications on one database stand for two worker processes: each caches a
    scope's vectors, and each sees the other's writes (and erasures) by vector."""
    scopes = [(Scope.USER, "u-1")]
    with (
        Tether.open(backend.settings(), clock=FakeClock(), embedder=HashingEmbedder()) as one,
        Tether.open(backend.settings(), clock=FakeClock(), embedder=HashingEmbedder()) as two,
    ):
        one.tenants.create("acme", admin="alice")
        alice_one = one.tenants.principal("acme", "alice")
        alice_two = two.tenants.principal("acme", "alice")
        first = one.memory.propose(alice_one, proposal("The claimant keeps receipts in a folder"))
        assert one.memory.recall(alice_one, "receipts folder", scopes, mode="vector").hits
        assert two.memory.recall(alice_two, "receipts folder", scopes, mode="vector").hits

        second = two.memory.propose(alice_two, proposal("The adjuster drives a green hatchback"))
        found = one.memory.recall(alice_one, "green hatchback", scopes, mode="vector", limit=1)

        assert [h.record.memory_id for h in found.hits] == [second.memory_id]
        one.subjects.erase(alice_one, "u-1")
        assert two.memory.recall(alice_two, "receipts folder", scopes, mode="vector").hits == []
        assert first.memory_id not in {h.record.memory_id for h in found.hits}


def proposal(text: str) -> MemoryProposal:
    return MemoryProposal(
        text=text, scope=Scope.USER, scope_id="u-1", source_type=SourceType.HUMAN, confidence=0.9
    )


def test_a_full_text_candidate_outside_the_vector_pool_is_weighed_by_its_cosine(
    app: Tether, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.memory import recall

    monkeypatch.setattr(recall, "POOL", 1)  # two candidates from each search
    alice = app.tenants.principal("acme", "alice")
    result = app.memory.recall(
        alice, "claimant kitchen bicycle photos", SCOPES, limit=1, include_unrelated=True
    )
    assert result.hits
    # Every candidate, the full-text search's as the vector search's, was given its
    # cosine: the top hit is explained by both scores whichever search found it.
    for hit in result.hits:
        if hit.why.get("constraint") is None:
            assert "cosine" in hit.why


def test_a_flush_that_fails_keeps_its_rows_for_the_next(
    app: Tether, backend: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A storage fault during a flush loses no log row and no access count: they wait in
    the buffer, and the next flush writes them."""
    alice = app.tenants.principal("acme", "alice")
    result = app.memory.recall(alice, "claimant bicycle", SCOPES)
    assert result.hits
    real = app.storage.transaction

    def failing(*args: object, **kwargs: object) -> object:
        raise StorageUnavailable("the database went away")

    monkeypatch.setattr(app.storage, "transaction", failing)
    with pytest.raises(StorageUnavailable):
        app.memory.flush_access()
    monkeypatch.setattr(app.storage, "transaction", real)
    assert logged(backend) == []
    app.memory.flush_access()
    assert [recall_id for recall_id, _ in logged(backend)] == [result.recall_id]
    counts = access_counts(backend)
    assert all(counts[hit.record.memory_id] == 1 for hit in result.hits)


def test_flushes_of_two_processes_at_once_count_every_hit(backend: TestDatabase) -> None:
    """Two applications on one database recall the same memories in different orders and
    flush at once, over and over: every flush commits (access counts are written in
    memory id order, so two flushes lock the rows they share in one order; in the order
    of the hits, PostgreSQL aborted one as a deadlock) and every hit is counted."""
    rounds, queries = 30, ["claimant bicycle kitchen", "kitchen plumber claimant"]
    with Tether.open(backend.settings(), embedder=HashingEmbedder()) as first:
        first.tenants.create("acme", admin="alice")
        alice = first.tenants.principal("acme", "alice")
        first.memory.propose_many(
            alice,
            [
                MemoryProposal(
                    text=text, scope=Scope.CASE, scope_id="C-1", source_type=SourceType.HUMAN
                )
                for text in TEXTS
            ],
        )
        with Tether.open(backend.settings(), embedder=HashingEmbedder()) as second:
            apps = [first, second]
            for app in apps:
                app.memory.log_every = 1_000_000
                app.memory.flush_every = 1_000_000
            ready = threading.Barrier(2)
            errors: list[BaseException] = []
            returned: list[int] = []

            def recall_and_flush(app: Tether, query: str) -> None:
                for _ in range(rounds):
                    hits = app.memory.recall(alice, query, [(Scope.CASE, "C-1")], limit=5).hits
                    returned.append(len(hits))
                    ready.wait()
                    try:
                        app.memory.flush_access()
                    except Exception as exc:
                        errors.append(exc)

            threads = [
                threading.Thread(target=recall_and_flush, args=(app, query))
                for app, query in zip(apps, queries, strict=True)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            for app in apps:
                app.memory.flush_access()
    assert errors == []
    assert sum(access_counts(backend).values()) == sum(returned) > 0


def test_a_question_ranks_below_the_statement_that_answers_it(backend: TestDatabase) -> None:
    texts = [
        "Who sells rye bread with caraway seeds?",
        "The market stall sells rye bread with caraway seeds every Saturday.",
        "The seeds for the garden arrived in March.",
    ]
    with Tether.open(backend.settings(), clock=FakeClock()) as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.memory.propose_many(alice, [proposal(text) for text in texts])
        hits = app.memory.recall(
            alice, "rye bread caraway seeds", [(Scope.USER, "u-1")], mode="lexical"
        ).hits
    # the shorter question matches the query best, yet states nothing: the statement
    # comes first (the code before ranked the question first)
    assert [hit.record.text for hit in hits][:2] == [texts[1], texts[0]]
    assert hits[1].why["questions"] == 1.0
    assert "questions" not in hits[0].why
