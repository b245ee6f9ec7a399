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
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import Tether
from tether.principals import Principal
from tether.runs import END, Workflow

THREADS = 4
STARTS = 10


class Note(BaseModel):
    n: int = 0


def _only(ctx: object, state: Note) -> str:
    return END


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with backend.open(embedder="none") as opened:
        yield opened


@pytest.fixture
def admin(app: Tether) -> Principal:
    app.tenants.create("acme", admin="acme-admin")
    return app.tenants.principal("acme", "acme-admin")


def test_runs_started_at_once_in_one_tenant_all_start(app: Tether, admin: Principal) -> None:
    workflow = Workflow("note", state=Note)
    workflow.node(_only, name="only")
    ready = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    started: list[str] = []
    lock = threading.Lock()

    def starter() -> None:
        ready.wait()
        for _ in range(STARTS):
            try:
                run = app.runs.start(admin, workflow, Note())
            except Exception as exc:
                errors.append(exc)
                continue
            with lock:
                started.append(run.run_id)

    threads = [threading.Thread(target=starter) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert len(set(started)) == THREADS * STARTS
    listed = app.runs.all(admin)
    assert {run.run_id for run in listed} == set(started)
    report = app.audit.verify("acme")
    assert report.ok, report
