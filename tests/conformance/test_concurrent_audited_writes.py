"""Several threads writing one tenant's audited actions at once, on each backend.

Starting a run inserts its row (on PostgreSQL the foreign key to ``tenants`` takes a key
share lock on the tenant's row) and then locks the tenant's audit head to append
``run.started``. A head locked ``FOR UPDATE`` conflicts with that key share lock, so two
starts at once each waited for the other and PostgreSQL aborted one as a deadlock (14 of
40 starts from two threads failed, each after a second). The head is locked ``FOR NO KEY
UPDATE``, as an update of the tenant's non-key columns locks it, which key share locks do
not block: every start succeeds and the chain verifies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import Tether
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.principals import Principal
from tether.runs import END, Workflow
from tether.threads.models import NewTurn

THREADS = 4
STARTS = 10


class Note(BaseModel):
    n: int = 0


def _only(ctx: object, state: Note) -> str:
    return END


def _workflow() -> Workflow[Note]:
    workflow = Workflow("note", state=Note)
    workflow.node(_only, name="only")
    return workflow


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with backend.open(embedder="none") as opened:
        yield opened


@pytest.fixture
def admin(app: Tether) -> Principal:
    app.tenants.create("acme", admin="acme-admin")
    return app.tenants.principal("acme", "acme-admin")


def test_runs_started_at_once_in_one_tenant_all_start(app: Tether, admin: Principal) -> None:
    workflow = _workflow()
    started: list[str] = []

    def starter() -> None:
        for _ in range(STARTS):
            started.append(app.runs.start(admin, workflow, Note()).run_id)

    errors = _at_once([starter] * THREADS)
    assert errors == []
    assert len(set(started)) == THREADS * STARTS
    listed = app.runs.all(admin)
    assert {run.run_id for run in listed} == set(started)
    report = app.audit.verify("acme")
    assert report.ok, report


def test_mixed_audited_writes_at_once_in_one_tenant_all_succeed(
    app: Tether, admin: Principal
) -> None:
    """Run starts, cancellations, role grants, memory proposals and thread turns, each from
    its own thread, in one tenant: each kind of write refers to the tenant row or appends
    to its trail, and none fails."""
    app.tenants.grant(admin, "acme-agent", ["agent"])
    app.tenants.grant(admin, "acme-op", ["operator"])
    agent = app.tenants.principal("acme", "acme-agent")
    operator = app.tenants.principal("acme", "acme-op")
    workflow = _workflow()
    thread = app.threads.create(agent, "u1")
    runs = [app.runs.start(agent, workflow, Note()).run_id for _ in range(STARTS)]

    def starts() -> None:
        for _ in range(STARTS):
            runs.append(app.runs.start(agent, workflow, Note()).run_id)

    def cancels() -> None:
        for run_id in list(runs[:STARTS]):
            app.runbook.cancel(operator, run_id, reason="no longer needed")

    def grants() -> None:
        for number in range(STARTS):
            app.tenants.grant(admin, f"reader-{number}", ["viewer"])

    def proposals() -> None:
        for number in range(STARTS):
            app.memory.propose(
                agent,
                MemoryProposal(
                    text=f"prefers tea with breakfast, note {number}",
                    scope=Scope.USER,
                    scope_id="u1",
                    subjects=["u1"],
                    source_type=SourceType.USER_MESSAGE,
                ),
            )

    def turns() -> None:
        for number in range(STARTS):
            app.threads.append(
                agent, thread.thread_id, NewTurn(role="user", content=f"hi {number}")
            )

    errors = _at_once([starts, cancels, grants, proposals, turns])
    assert errors == []
    assert len(app.runs.all(agent, limit=1000)) == 2 * STARTS
    assert len(app.threads.turns(agent, thread.thread_id)) == STARTS
    report = app.audit.verify("acme")
    assert report.ok, report


def _at_once(jobs: list[Callable[[], None]]) -> list[BaseException]:
    """Run each job in its own thread, released together; the errors they raised."""
    ready = threading.Barrier(len(jobs))
    errors: list[BaseException] = []

    def body(job: Callable[[], None]) -> None:
        ready.wait()
        try:
            job()
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return errors
