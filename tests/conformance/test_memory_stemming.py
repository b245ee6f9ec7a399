"""SQLite's full-text index stems words (memory migration 0002), so a question in another
word form finds the memory; PostgreSQL's ``simple`` text search does not stem."""

from __future__ import annotations

from pathlib import Path

from tether import FakeClock, Tether, load_settings
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryProposal, Scope, SourceType


def test_sqlite_recall_matches_other_forms_of_a_word(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'stem.db'}"
    Tether.migrate(url=url)[0].close()
    with Tether.open(load_settings(url=url), clock=FakeClock(), embedder=HashingEmbedder()) as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        decision = app.memory.propose(
            alice,
            MemoryProposal(
                text="Melanie painted a sunrise over the lake",
                scope=Scope.USER,
                scope_id="u-1",
                source_type=SourceType.HUMAN,
                confidence=0.9,
            ),
        )

        result = app.memory.recall(
            alice, "what paintings did she make", [(Scope.USER, "u-1")], mode="lexical"
        )

    assert [hit.record.memory_id for hit in result.hits] == [decision.memory_id]
