"""What the operator console reads beyond a tenant's own runs: the platform administrators'
view of every tenant's run rows (``app.platform``) and the recall log (``app.memory.recalls``:
who recalled which memories), on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import InvalidInput, PermissionDenied
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.principals import Principal
from tether.runs import END, RunContext, RunStatus, Workflow
from tether.runs.listing import RunQuery


class Empty(BaseModel):
    note: str = ""


def _noop() -> Workflow[Empty]:
    wf: Workflow[Empty] = Workflow("noop", state=Empty)

    @wf.node(start=True)
    def only(ctx: RunContext, state: Empty) -> str:
        return END

    return wf


NOOP = _noop()


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with Tether.open(backend.settings(), clock=FakeClock()) as opened:
        for tenant in ("acme", "globex"):
            opened.tenants.create(tenant, admin=f"{tenant}-admin")
        yield opened


def _admin(app: Tether, tenant: str) -> Principal:
    return app.tenants.principal(tenant, f"{tenant}-admin")


def test_a_platform_administrator_lists_tenants_and_any_tenants_run_rows(app: Tether) -> None:
    platform = app.tenants.add_platform_admin("root").as_principal()
    acme, globex = _admin(app, "acme"), _admin(app, "globex")
    started = [app.runs.start(acme, NOOP, Empty()).run_id for _ in range(3)]
    app.runs.start(globex, NOOP, Empty())
    app.runs.cancel(acme, started[0], reason="not needed")

    assert app.platform.tenants(platform) == ["acme", "globex"]
    rows = app.platform.runs(platform, "acme")
    assert [run.run_id for run in rows] == started[::-1]
    assert {run.tenant_id for run in rows} == {"acme"}
    cancelled = app.platform.runs(platform, "acme", RunQuery(status=RunStatus.CANCELLED))
    assert [run.run_id for run in cancelled] == [started[0]]
    assert app.platform.runs(platform, "acme", RunQuery(before=started[1])) == [rows[2]]
    assert app.platform.runs(platform, "nobody") == []
    with pytest.raises(InvalidInput):
        app.platform.runs(platform, "_global")


def test_no_tenant_principal_reaches_the_platform_view(app: Tether) -> None:
    acme = _admin(app, "acme")
    app.runs.start(acme, NOOP, Empty())
    for call in (
        lambda: app.platform.tenants(acme),
        lambda: app.platform.runs(acme, "acme"),
        lambda: app.platform.runs(acme, "globex"),
    ):
        with pytest.raises(PermissionDenied, match="platform administrator"):
            call()


def _remember(app: Tether, who: Principal, text: str) -> str:
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
    assert decision.memory_id is not None, decision
    return decision.memory_id


def test_the_recall_log_says_who_recalled_which_memories(app: Tether) -> None:
    clock = app.clock
    assert isinstance(clock, FakeClock)
    acme = _admin(app, "acme")
    app.tenants.grant(acme, "sam", ["approver"])
    app.tenants.grant(acme, "vic", ["viewer"])
    sam, vic = app.tenants.principal("acme", "sam"), app.tenants.principal("acme", "vic")
    bike = _remember(app, acme, "The claimant owns a cargo bike")
    email = _remember(app, acme, "The claimant prefers email")

    first = app.memory.recall(vic, "cargo bike", [(Scope.USER, "u-1")])
    clock.advance(timedelta(seconds=1))
    second = app.memory.recall(sam, "prefers email", [(Scope.USER, "u-1")])
    assert [hit.record.memory_id for hit in first.hits] == [bike]
    assert [hit.record.memory_id for hit in second.hits] == [email]

    log = app.memory.recalls(sam)
    assert [(entry.recall_id, entry.principal_id) for entry in log] == [
        (second.recall_id, "sam"),
        (first.recall_id, "vic"),
    ]
    assert log[1].returned == [bike]
    assert log[1].scopes and all(scope.startswith("user:") for scope in log[1].scopes)
    assert "u-1" not in repr(log) and "cargo" not in repr(log)
    assert [entry.principal_id for entry in app.memory.recalls(acme, actor="vic")] == ["vic"]
    assert [e.recall_id for e in app.memory.recalls(acme, memory_id=bike)] == [first.recall_id]
    assert app.memory.recalls(acme, limit=1)[0].recall_id == second.recall_id
    assert app.memory.recalls(_admin(app, "globex"), memory_id=bike) == []
    with pytest.raises(PermissionDenied):
        app.memory.recalls(vic)
    with pytest.raises(InvalidInput):
        app.memory.recalls(acme, memory_id="not-an-id")
