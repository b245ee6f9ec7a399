"""The migrations that rebuilt full-text search (SQLite memory 0003: scope-prefixed terms;
PostgreSQL memory 0004: the memory_terms table) and gave memories sentence vectors
(SQLite 0004, PostgreSQL 0005), with the scopes' vector counters after them, and the
context columns (SQLite 0006, PostgreSQL 0008), PostgreSQL's bm25 counts and lengths
(0009), its index of every word, stop words too (0010), and each tenant's totals (0011) carry
every existing memory over: a database that holds memories in the previous layout finds them
after `tether migrate`."""

from __future__ import annotations

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.memory.models import MemoryProposal, Scope, SourceType

TEXTS = [
    "The claimant keeps the receipts in a blue folder",
    "Painting classes on Thursday evenings at the community hall",
    "The adjuster photographed the water damage in the kitchen",
]


def previous_layout(database: TestDatabase) -> None:
    """Put the database's search and vectors back as memory version 2 (SQLite) or 3
    (PostgreSQL) kept them."""
    with database.raw() as raw:
        for column in ("index_context", "episode", "contradicted_at"):
            raw.execute(f"ALTER TABLE memories DROP COLUMN {column}")
        if database.backend == "sqlite":
            raw.execute("DROP TABLE memory_fts")
            raw.execute(
                "CREATE VIRTUAL TABLE memory_fts USING fts5 (text, scope_token, "
                "tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            raw.execute(
                "INSERT INTO memory_fts (rowid, text, scope_token) "
                "SELECT fts_rowid, text, 'sold' FROM memories"
            )
            raw.execute("DROP TABLE memory_vectors")
            raw.execute(
                "CREATE TABLE memory_vectors (tenant_id TEXT NOT NULL, memory_id TEXT NOT NULL, "
                "embedder_id TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (tenant_id, memory_id, embedder_id)) WITHOUT ROWID"
            )
            raw.execute("DROP TABLE memory_scope_versions")
            first_new = 3
        else:
            raw.execute("DROP TRIGGER memories_term_totals ON memories")
            raw.execute("DROP FUNCTION tether_memory_term_totals()")
            raw.execute("DROP TABLE memory_term_totals")
            raw.execute("DROP TRIGGER memories_terms ON memories")
            raw.execute("DROP FUNCTION tether_memory_terms()")
            raw.execute("DROP TABLE memory_terms")
            raw.execute("ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_pkey")
            raw.execute("ALTER TABLE memory_vectors DROP COLUMN part")
            raw.execute(
                "ALTER TABLE memory_vectors ADD PRIMARY KEY (tenant_id, memory_id, embedder_id)"
            )
            raw.execute("DROP TABLE memory_scope_versions")
            raw.execute("DROP TEXT SEARCH CONFIGURATION tether_english")
            raw.execute("DROP TEXT SEARCH DICTIONARY tether_english_stem")
            first_new = 4
        raw.execute(
            "DELETE FROM tether_schema_versions WHERE component = 'memory' AND version >= ?",
            (first_new,),
        )


def test_existing_memories_are_found_after_the_search_migration(backend: TestDatabase) -> None:
    scopes = [(Scope.USER, "u-1"), (Scope.CASE, "c-9")]
    with Tether.open(backend.settings(), clock=FakeClock()) as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        for text, (scope, scope_id) in zip(TEXTS, scopes * 2, strict=False):
            app.memory.propose(
                alice,
                MemoryProposal(
                    text=text,
                    scope=scope,
                    scope_id=scope_id,
                    source_type=SourceType.HUMAN,
                    confidence=0.9,
                ),
            )
    previous_layout(backend)

    migrated, applied = Tether.migrate(url=backend.url)
    migrated.close()

    # SQLite: 0003-0006; PostgreSQL: 0004-0011 (0007 re-points the rebuilt tables'
    # row-level security at the verified tenant; 0009 rebuilds memory_terms for bm25,
    # 0010 with stop words kept; 0011 counts each tenant's memories and their length).
    expected = 4 if backend.backend == "sqlite" else 8
    assert [m.component for m in applied] == ["memory"] * expected
    with Tether.open(backend.settings(), clock=FakeClock()) as app:
        alice = app.tenants.principal("acme", "alice")
        for query, expected in [
            ("receipts folder", TEXTS[0]),
            ("painting class", TEXTS[1]),
            ("photographs of damage", TEXTS[2]),
        ]:
            hits = app.memory.recall(alice, query, scopes, limit=1, mode="lexical").hits
            assert [h.record.text for h in hits] == [expected]
        assert (
            app.memory.recall(alice, "receipts", [(Scope.CASE, "c-9")], mode="lexical").hits == []
        )
    if backend.backend == "postgres":
        with backend.raw() as raw:
            totals = raw.execute("SELECT tenant_id, memories FROM memory_term_totals")
        assert totals == [("acme", len(TEXTS))]
