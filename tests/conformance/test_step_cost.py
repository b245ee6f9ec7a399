"""What one durable step costs the database: one commit on SQLite, one round trip on
PostgreSQL (for a node without effects). Counted as the slope between a 10-node and a
20-node run, so the fixed cost of claiming and loading a run drops out."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

import psycopg
import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import Tether
from tether.runs import END, RunContext, Workflow, WorkflowRegistry


class Count(BaseModel):
    n: int = 0


def chain(length: int) -> Workflow[Count]:
    workflow: Workflow[Count] = Workflow(f"chain{length}", state=Count)

    def make(index: int) -> None:
        def node(ctx: RunContext, state: Count) -> str:
            state.n += 1
            return f"n{index + 1}" if index + 1 < length else END

        workflow.node(node, name=f"n{index}")

    for index in range(length):
        make(index)
    return workflow


def run_counting(app: Tether, length: int, counter: Callable[[], int]) -> int:
    workflow = chain(length)
    admin = app.tenants.principal("acme", "alice")
    run = app.runs.start(admin, workflow, Count())
    executor = app.executor(WorkflowRegistry(workflow))
    before = counter()
    assert executor.execute("acme", run.run_id).status.value == "completed"
    return counter() - before


def setup_tenant(app: Tether) -> None:
    app.tenants.create("acme", admin="alice")
    admin = app.tenants.principal("acme", "alice")
    app.tenants.grant(admin, "alice", ["admin", "agent"])


def test_one_commit_per_durable_step_on_sqlite(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'cost.db'}"
    Tether.migrate(url=url)[0].close()
    from tether.config import load_settings

    with Tether.open(load_settings(url=url, sqlite_synchronous="FULL")) as app:
        setup_tenant(app)
        commits = 0

        def trace(statement: str) -> None:
            nonlocal commits
            if statement.strip().upper().startswith("COMMIT"):
                commits += 1

        connection = app.storage._connection()  # type: ignore[attr-defined]
        connection.set_trace_callback(trace)
        ten = run_counting(app, 10, lambda: commits)
        twenty = run_counting(app, 20, lambda: commits)
        connection.set_trace_callback(None)
    per_step = (twenty - ten) / 10
    print(f"\nSQLite commits: 10-node run {ten}, 20-node run {twenty}, per durable step {per_step}")
    assert per_step == 1


@pytest.mark.parametrize("backend_name", [pytest.param("postgres", marks=pytest.mark.postgres)])
def test_one_round_trip_per_durable_step_on_postgres(backend: TestDatabase) -> None:
    with (
        tempfile.NamedTemporaryFile("w+", suffix=".trace") as trace_file,
        backend.open(pg_pool_min_size=1, pg_pool_max_size=1) as app,
    ):
        setup_tenant(app)
        pool = app.storage._pool  # type: ignore[attr-defined]
        with pool.connection() as conn:
            conn.pgconn.trace(trace_file.fileno())
            conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            # psycopg prepares a statement at its 5th use, one round trip more that once:
            # wherever that falls, it is no step's cost.
            conn.prepare_threshold = None

        def round_trips() -> int:
            trace_file.flush()
            os.fsync(trace_file.fileno())
            flips, last = 0, "B"
            with open(trace_file.name) as lines:
                for line in lines:
                    direction = line.split("\t", 1)[0]
                    if direction == "F" and last == "B":
                        flips += 1
                    if direction in ("F", "B"):
                        last = direction
            return flips

        try:
            ten = run_counting(app, 10, round_trips)
            twenty = run_counting(app, 20, round_trips)
        finally:
            with pool.connection() as conn:
                conn.pgconn.untrace()
    per_step = (twenty - ten) / 10
    print(f"\nPostgreSQL round trips: 10-node run {ten}, 20-node run {twenty}, per step {per_step}")
    assert per_step == 1
