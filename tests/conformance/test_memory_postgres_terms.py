"""PostgreSQL full-text search through memory_terms (memory migration 0004).

Under row-level security the planner may not use the GIN index on ``memories.tsv`` (``@@``
is not leakproof), so searches look lexemes up in ``memory_terms`` by text equality. The
table must follow every insert and delete of a memory, and its counts and lengths must
rank the memories by bm25 (memory migration 0009), as SQLite's FTS5 ranks them: with the
number of memories and their average length taken over the tenant (memory_term_totals,
memory migration 0011), as FTS5 takes them over its whole index.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

from tests.support import PostgresServer
from tether import FakeClock, Tether, load_settings
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType

pytestmark = pytest.mark.postgres

TEXTS = [
    "the invoice for the garden was paid",
    "garden garden garden party invoice",
    "doctor visit about the invoice claim",
    "claim claim policy doctor garden invoice",
    "nothing relevant here at all",
]


@pytest.fixture
def database(postgres_server: PostgresServer, postgres_template: str) -> Iterator[str]:
    name = postgres_server.create_database(template=postgres_template)
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.drop_database(name)


def open_app(url: str) -> Tether:
    app = Tether.open(load_settings(url=url), clock=FakeClock(datetime(2026, 1, 1, tzinfo=UTC)))
    app.tenants.create("acme", admin="alice")
    return app


def propose(app: Tether, scope_id: str, texts: list[str]) -> list[str]:
    who = app.tenants.principal("acme", "alice")
    decisions = app.memory.propose_many(
        who,
        [
            MemoryProposal(
                text=text,
                kind=MemoryKind.EVENT,
                scope=Scope.USER,
                scope_id=scope_id,
                subjects=[scope_id],
                source_type=SourceType.HUMAN,
            )
            for text in texts
        ],
    )
    return [d.memory_id for d in decisions if d.memory_id]


def terms(url: str) -> set[tuple[str, str, str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tenant_id, scope_key, term, memory_id FROM memory_terms"
        ).fetchall()
    return {tuple(row) for row in rows}


def expected_terms(url: str) -> set[tuple[str, str, str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tenant_id, scope || ':' || scope_id, lexeme, memory_id"
            " FROM memories, unnest(tsvector_to_array(tsv)) AS lexeme"
        ).fetchall()
    return {tuple(row) for row in rows}


def totals(url: str) -> tuple[set[tuple[str, int, float]], set[tuple[str, int, float]]]:
    """Each tenant's kept (memories, summed length), and the same counted over memories."""
    with psycopg.connect(url) as conn:
        kept = conn.execute(
            "SELECT tenant_id, sum(memories)::bigint, sum(length) FROM memory_term_totals"
            " GROUP BY tenant_id"
        )
        counted = conn.execute(
            "SELECT tenant_id, count(*), sum((SELECT sum(cardinality(a.positions))"
            " FROM unnest(tsv) AS a)) FROM memories GROUP BY tenant_id"
        )
        return {tuple(row) for row in kept}, {tuple(row) for row in counted}


def test_terms_follow_inserts_and_erasure(database: str) -> None:
    app = open_app(database)
    try:
        propose(app, "u-1", TEXTS)
        propose(app, "u-2", TEXTS[:2])
        found = terms(database)
        assert found and found == expected_terms(database)
        assert {scope for _, scope, _, _ in found} == {"user:u-1", "user:u-2"}
        kept, counted = totals(database)
        assert kept == counted and {memories for _, memories, _ in kept} == {len(TEXTS) + 2}
        app.subjects.erase(app.tenants.principal("acme", "alice"), "u-1")
        left = terms(database)
        assert left == expected_terms(database)
        assert {scope for _, scope, _, _ in left} == {"user:u-2"}
        kept, counted = totals(database)
        assert kept == counted and {memories for _, memories, _ in kept} == {2}
    finally:
        app.close()


def test_terms_hold_each_lexeme_count_and_the_memory_length(database: str) -> None:
    app = open_app(database)
    try:
        propose(app, "u-1", TEXTS[:2])
        with psycopg.connect(database) as conn:
            rows = conn.execute(
                "SELECT m.text, t.term, t.weight, t.length FROM memory_terms t"
                " JOIN memories m ON m.memory_id = t.memory_id"
            ).fetchall()
        held = {(text, term): (weight, length) for text, term, weight, length in rows}
        # "garden garden garden party invoice": four lexemes, five occurrences
        assert held[(TEXTS[1], "garden")] == (3.0, 5.0)
        assert held[(TEXTS[1], "invoic")] == (1.0, 5.0)
        # stop words are indexed, as on SQLite (memory 0010): all seven words of the first
        assert held[(TEXTS[0], "garden")] == (1.0, 7.0)
        assert held[(TEXTS[0], "the")] == (2.0, 7.0)
    finally:
        app.close()


def bm25(
    postings: dict[str, dict[str, tuple[float, float]]],
    terms: list[str],
    memories: int,
    average: float,
) -> dict[str, float]:
    """The reference score, FTS5's bm25 (k1 1.2, b 0.75): each term's postings in the
    scope (memory -> count, length), with ``memories`` and their ``average`` length over
    the whole index, and an inverse document frequency of ln((N - n + 0.5) / (n + 0.5))
    clamped to 1e-6."""
    lists = [postings[term] for term in terms if postings.get(term)]
    scores: dict[str, float] = {}
    for found in lists:
        idf = max(math.log((memories - len(found) + 0.5) / (len(found) + 0.5)), 1e-6)
        for memory_id, (count, length) in found.items():
            norm = count + 1.2 * (0.25 + 0.75 * length / average)
            scores[memory_id] = scores.get(memory_id, 0.0) + idf * count * 2.2 / norm
    return scores


def test_lexical_recall_ranks_by_bm25_within_its_scope(database: str) -> None:
    app = open_app(database)
    try:
        ids = propose(app, "u-1", TEXTS)
        propose(app, "u-2", [*TEXTS, "garden garden garden garden", "claim"])
        who = app.tenants.principal("acme", "alice")
        query = "garden invoice claim doctor"
        result = app.memory.recall(who, query, [(Scope.USER, "u-1")], limit=10, mode="lexical")
        got = [hit.record.memory_id for hit in result.hits]
        lexemes = ["garden", "invoic", "claim", "doctor"]
        postings: dict[str, dict[str, tuple[float, float]]] = {}
        with psycopg.connect(database) as conn:
            for term, memory_id, weight, length in conn.execute(
                "SELECT term, memory_id, weight, length FROM memory_terms"
                " WHERE scope_key = 'user:u-1' AND term = ANY(%s)",
                (lexemes,),
            ):
                postings.setdefault(term, {})[memory_id] = (weight, length)
            memories, average = conn.execute(
                "SELECT count(*), avg(length) FROM"
                " (SELECT DISTINCT memory_id, length FROM memory_terms) AS each_memory"
            ).fetchone()
        assert memories == 2 * len(TEXTS) + 2
        expected = bm25(postings, lexemes, memories, average)
        assert set(got) == set(expected) and set(got) <= set(ids)
        # document frequencies are the scope's own (the other scope's postings do not
        # count); the number of memories and their average length are the tenant's
        assert got == sorted(expected, key=lambda memory_id: (-expected[memory_id], memory_id))
        lexical = {hit.record.memory_id: float(hit.why["lexical"]) for hit in result.hits}
        for a in expected:
            for b in expected:
                if expected[a] > expected[b] + 1e-6:
                    assert lexical[a] > lexical[b]
    finally:
        app.close()
