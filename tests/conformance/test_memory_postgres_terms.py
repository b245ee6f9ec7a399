"""PostgreSQL full-text search through memory_terms (memory migration 0004).

Under row-level security the planner may not use the GIN index on ``memories.tsv`` (``@@``
is not leakproof), so searches look lexemes up in ``memory_terms`` by text equality. The
table must follow every insert and delete of a memory, and its weights must order the
memories exactly as ``ts_rank`` does.
"""

from __future__ import annotations

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


def test_terms_follow_inserts_and_erasure(database: str) -> None:
    app = open_app(database)
    try:
        propose(app, "u-1", TEXTS)
        propose(app, "u-2", TEXTS[:2])
        found = terms(database)
        assert found and found == expected_terms(database)
        assert {scope for _, scope, _, _ in found} == {"user:u-1", "user:u-2"}
        app.subjects.erase(app.tenants.principal("acme", "alice"), "u-1")
        left = terms(database)
        assert left == expected_terms(database)
        assert {scope for _, scope, _, _ in left} == {"user:u-2"}
    finally:
        app.close()


def test_lexical_recall_ranks_as_ts_rank_within_its_scope(database: str) -> None:
    app = open_app(database)
    try:
        ids = propose(app, "u-1", TEXTS)
        propose(app, "u-2", TEXTS)
        who = app.tenants.principal("acme", "alice")
        query = "garden invoice claim doctor"
        result = app.memory.recall(who, query, [(Scope.USER, "u-1")], limit=10, mode="lexical")
        got = [hit.record.memory_id for hit in result.hits]
        assert set(got) <= set(ids)
        with psycopg.connect(database) as conn:
            rows = conn.execute(
                "SELECT memory_id, ts_rank(tsv, q) FROM memories,"
                " to_tsquery('english', 'garden | invoice | claim | doctor') AS q"
                " WHERE scope_id = 'u-1' AND tsv @@ q"
            ).fetchall()
        assert set(got) == {memory_id for memory_id, _ in rows}
        lexical = {hit.record.memory_id: float(hit.why["lexical"]) for hit in result.hits}
        rank = dict(rows)
        # the weights in memory_terms give the same order as ts_rank
        with psycopg.connect(database) as conn:
            weights = dict(
                conn.execute(
                    "SELECT memory_id, sum(weight) FROM memory_terms WHERE scope_key = 'user:u-1'"
                    " AND term = ANY(ARRAY['garden', 'invoic', 'claim', 'doctor'])"
                    " GROUP BY memory_id"
                ).fetchall()
            )
        for a in rank:
            for b in rank:
                if rank[a] > rank[b] + 1e-6:
                    assert weights[a] > weights[b]
                    assert lexical[a] > lexical[b]
    finally:
        app.close()
