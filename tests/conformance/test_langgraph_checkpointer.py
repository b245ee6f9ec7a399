"""LangGraph's own checkpointer conformance suite against ``TetherSaver``, on each backend.

``langgraph-checkpoint-conformance`` (the ``dev`` extra) runs every base capability (put,
put_writes, get_tuple, list, delete_thread) and every extended one (delete_for_runs,
copy_thread, prune); the test prints its report and fails unless every capability was
detected and passed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from tether import Tether
from tether.integrations.langgraph import TetherSaver
from tether.principals import Principal


def operator(app: Tether, tenant: str) -> Principal:
    app.tenants.create(tenant, admin=f"{tenant}-admin")
    admin = app.tenants.principal(tenant, f"{tenant}-admin")
    app.tenants.grant(admin, f"{tenant}-graph", ["operator"])
    return app.tenants.principal(tenant, f"{tenant}-graph")


def test_tether_saver_passes_every_capability(
    app: Tether, capsys: pytest.CaptureFixture[str]
) -> None:
    principal = operator(app, "acme")

    @checkpointer_test(name=f"TetherSaver ({app.storage.backend})")
    async def tether_saver() -> AsyncIterator[TetherSaver]:
        yield TetherSaver(app, principal)

    report = asyncio.run(validate(tether_saver))
    with capsys.disabled():
        report.print_report()

    failures = {name: r.failures for name, r in report.results.items() if r.failures}
    assert failures == {}
    assert {name for name, r in report.results.items() if r.detected} == {
        c.value for c in ALL_CAPABILITIES
    }
    assert report.passed_all()
    assert report.conformance_level() == "FULL"
