"""The recall log read back: who recalled which memory, never what they asked."""

from __future__ import annotations

from tests.support import auditor
from tether import Tether
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.principals import Principal, Role


def test_the_log_names_who_recalled_a_memory_without_the_query(app: Tether) -> None:
    app.tenants.create("acme", admin="ann")
    ann = app.tenants.principal("acme", "ann")
    app.tenants.grant(ann, "bot", ["agent"])
    bot = app.tenants.principal("acme", "bot")
    bike = app.memory.propose(
        ann,
        MemoryProposal(
            text="The claimant owns a cargo bike",
            scope=Scope.USER,
            scope_id="u-1",
            source_type=SourceType.HUMAN,
        ),
    ).memory_id
    assert bike is not None

    app.memory.recall(bot, "which bike does the claimant ride", [(Scope.USER, "u-1")])
    app.memory.recall(ann, "holiday plans", [(Scope.USER, "u-2")])

    about_bike = app.memory.recalls(auditor("acme"), memory_id=bike)
    assert [entry.principal_id for entry in about_bike] == ["bot"]
    assert about_bike[0].returned == [bike]
    [scope] = about_bike[0].scopes
    assert scope.startswith("user:") and "u-1" not in scope  # a person's id, keyed-hashed
    assert "bike" not in about_bike[0].model_dump_json()
    assert [e.principal_id for e in app.memory.recalls(auditor("acme"), recalled_by="ann")] == [
        "ann"
    ]
    assert len(app.memory.recalls(auditor("acme"))) == 2
    assert app.memory.recalls(Principal("globex", "gil", frozenset({Role.ADMIN}))) == []
