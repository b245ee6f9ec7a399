"""The platform administrators' view of every tenant's run rows (``app.platform``), which
the operator console's runs page shows when one of them picks a tenant, on both backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import InvalidInput, PermissionDenied
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
    app.runbook.cancel(acme, started[0], reason="not needed")

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
