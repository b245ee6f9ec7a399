"""Regression tests for claims of identity no one checked, on every backend.

Working memory, ``procedures.current`` and ``audit.entries`` took a raw tenant string
(``app.working.set("_global", …)`` was accepted); an agent could forget an admin's tenant
constraint at once although writing one is held for approval. Each now takes the acting
principal and answers through the permission map.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import PermissionDenied
from tether.memory.models import MemoryKind, MemoryProposal, MemoryStatus, Scope, SourceType
from tether.principals import GLOBAL_TENANT, Principal, Role


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with Tether.open(backend.settings(embedder="none"), clock=FakeClock()) as opened:
        for tenant in ("acme", "globex"):
            opened.tenants.create(tenant, admin="alice")
            admin = opened.tenants.principal(tenant, "alice")
            opened.tenants.grant(admin, "bot", ["agent"])
            opened.tenants.grant(admin, "olga", ["operator"])
            opened.tenants.grant(admin, "vic", ["viewer"])
        yield opened


def who(app: Tether, name: str, tenant: str = "acme") -> Principal:
    return app.tenants.principal(tenant, name)


def constraint(app: Tether, author: Principal) -> str:
    decision = app.memory.propose(
        author,
        MemoryProposal(
            text="Never refund more than 500 euro without a second approver",
            kind=MemoryKind.CONSTRAINT,
            scope=Scope.TENANT,
            scope_id="acme",
            source_type=SourceType.HUMAN,
            source_ref="doc:refund-rules",
            source_version="1",
            confidence=0.95,
        ),
    )
    assert decision.memory_id is not None
    return decision.memory_id


def test_an_agent_cannot_forget_an_admins_tenant_constraint(app: Tether) -> None:
    rule = constraint(app, who(app, "alice"))
    bot = who(app, "bot")

    for change in (app.memory.forget, app.memory.contradict):
        with pytest.raises(PermissionDenied, match="approval"):
            change(bot, rule)
    with pytest.raises(PermissionDenied):
        app.memory.invalidate_source(bot, "doc:refund-rules", "2")

    record = app.memory.get(bot, rule)
    assert record.status is MemoryStatus.ACTIVE and record.confidence == 0.95
    assert app.memory.forget(who(app, "olga"), rule).status is MemoryStatus.FORGOTTEN


def test_an_agents_own_user_memory_is_still_its_to_forget(app: Tether) -> None:
    bot = who(app, "bot")
    decision = app.memory.propose(
        bot,
        MemoryProposal(
            text="The claimant owns a cargo bike",
            scope=Scope.USER,
            scope_id="u-1",
            source_type=SourceType.HUMAN,
            confidence=0.9,
        ),
    )
    assert decision.memory_id is not None
    assert app.memory.forget(bot, decision.memory_id).status is MemoryStatus.FORGOTTEN


RAW_TENANT_CALLS: dict[str, Any] = {
    "working.set": lambda app, t: app.working.set(t, "s-1", "k", "v"),
    "working.get": lambda app, t: app.working.get(t, "s-1", "k"),
    "working.items": lambda app, t: app.working.items(t, "s-1"),
    "working.clear": lambda app, t: app.working.clear(t, "s-1"),
    "working.erase_sessions": lambda app, t: app.working.erase_sessions(t, ["s-1"]),
    "procedures.current": lambda app, t: app.procedures.current(t),
    "procedures.history": lambda app, t: app.procedures.history(t),
    "audit.entries": lambda app, t: app.audit.entries(t),
    "audit.latest": lambda app, t: app.audit.latest(t),
    "tenants.principals": lambda app, t: app.tenants.principals(t),
}


@pytest.mark.parametrize("call", sorted(RAW_TENANT_CALLS))
@pytest.mark.parametrize("tenant", ["acme", GLOBAL_TENANT])
def test_a_raw_tenant_string_is_no_principal(app: Tether, call: str, tenant: str) -> None:
    with pytest.raises(PermissionDenied, match="needs the acting principal"):
        RAW_TENANT_CALLS[call](app, tenant)


def test_working_memory_stays_in_the_principals_tenant(app: Tether) -> None:
    app.working.set(who(app, "bot"), "s-1", "draft", "acme's draft")

    assert app.working.get(who(app, "bot", "globex"), "s-1", "draft") is None
    assert app.working.items(who(app, "alice", "globex"), "s-1") == {}
    assert app.working.clear(who(app, "olga", "globex"), "s-1") == 0
    assert app.working.get(who(app, "vic"), "s-1", "draft") == "acme's draft"
    with pytest.raises(PermissionDenied):
        app.working.set(who(app, "vic"), "s-1", "draft", "a viewer only reads")
    platform = Principal(GLOBAL_TENANT, "pat", frozenset({Role.ADMIN}))
    with pytest.raises(PermissionDenied):
        app.working.set(platform, "s-1", "draft", "the platform has no sessions")
    assert app.working.get(who(app, "bot"), "s-1", "draft") == "acme's draft"


def test_the_trail_and_the_procedures_are_read_by_the_principals_tenant_only(
    app: Tether,
) -> None:
    acme = app.audit.entries(who(app, "alice"), limit=1000)
    globex = app.audit.entries(who(app, "alice", "globex"), limit=1000)

    assert {entry.tenant_id for entry in acme} == {"acme"}
    assert {entry.tenant_id for entry in globex} == {"globex"}
    for reader in ("bot", "vic"):
        with pytest.raises(PermissionDenied):
            app.audit.entries(who(app, reader))
    assert app.procedures.current(who(app, "vic")) is None
    with pytest.raises(PermissionDenied):
        app.tenants.principals(who(app, "bot"))
