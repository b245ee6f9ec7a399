"""Tether's side of the durable-steps benchmark: the workload, on SQLite and PostgreSQL."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel

from bench._harness import (
    Contender,
    PgRoundTrips,
    SqliteStatements,
    bench_settings,
    pg_round_trip_counts,
    sqlite_commit_counts,
    unavailable,
)
from tether import Tether
from tether.principals import Principal
from tether.runs import END, Executor, RunStatus, Workflow, WorkflowRegistry

TENANT = "bench"
STEP_COUNTS = (10, 20)
"""Workflows every session registers: counting compares a 20-step run with a 10-step one."""


class Counter(BaseModel):
    n: int = 0


def _increment(next_node: str) -> Callable[[Any, Counter], str]:
    def node(ctx: Any, state: Counter) -> str:
        state.n += 1
        return next_node

    return node


def make_workflow(steps: int) -> Workflow[Counter]:
    """``steps`` trivial nodes in a chain, each adding one to a counter."""
    workflow = Workflow(f"chain{steps}", state=Counter)
    names = [f"node{i}" for i in range(steps)]
    for i, name in enumerate(names):
        workflow.node(_increment(names[i + 1] if i + 1 < steps else END), name=name)
    return workflow


WORKFLOWS = {steps: make_workflow(steps) for steps in STEP_COUNTS}


def bare_loop(steps: int) -> None:
    """The floor: the same node functions in a plain loop, with no engine and no database.

    It builds the state and dispatches on the returned names exactly as the nodes expect,
    and does nothing else.
    """
    workflow = WORKFLOWS[steps]
    state = Counter()
    node = workflow.start
    while node != END:
        node = workflow.nodes[node].fn(None, state)
    if state.n != steps:
        raise RuntimeError(f"bare loop counted {state.n}, expected {steps}")


@dataclass
class TetherSession:
    app: Tether
    agent: Principal
    executor: Executor

    def run(self, steps: int) -> None:
        """One run: ``runs.start`` then ``execute`` until it completes."""
        run = self.app.runs.start(self.agent, WORKFLOWS[steps], Counter())
        result = self.executor.execute(TENANT, run.run_id)
        for _ in range(3):
            if result.status.finished:
                break
            result = self.executor.execute(TENANT, run.run_id)
        if result.status is not RunStatus.COMPLETED:
            raise RuntimeError(f"run {run.run_id} ended {result.status.value}: {result.error}")


@contextmanager
def tether_session(
    url: str,
    *,
    synchronous: str | None = None,
    sqlite_counter: SqliteStatements | None = None,
    pg_counter: PgRoundTrips | None = None,
) -> Iterator[TetherSession]:
    """Migrate the database at ``url``, open it with these settings and make a tenant."""
    migrated, _ = Tether.migrate(bench_settings(url))
    migrated.close()
    settings = bench_settings(url, sqlite_synchronous=synchronous)
    with _patched(sqlite_counter, pg_counter):
        app = Tether.open(settings)
    try:
        if TENANT not in {t.tenant_id for t in app.tenants.all()}:
            app.tenants.create(TENANT, admin="admin")
            admin = app.tenants.principal(TENANT, "admin")
            app.tenants.grant(admin, "agent", ["agent"])
        agent = app.tenants.principal(TENANT, "agent")
        yield TetherSession(app, agent, app.executor(WorkflowRegistry(*WORKFLOWS.values())))
    finally:
        app.close()


@contextmanager
def _patched(
    sqlite_counter: SqliteStatements | None, pg_counter: PgRoundTrips | None
) -> Iterator[None]:
    if sqlite_counter is not None:
        with sqlite_counter.patch_connect():
            yield
    elif pg_counter is not None:
        with pg_counter.patch_connect():
            yield
    else:
        yield


@contextmanager
def scratch_postgres(admin_url: str) -> Iterator[tuple[str, str]]:
    """A fresh, uniquely named database next to ``admin_url``'s; dropped afterwards.

    Yields its URL and the server's version.
    """
    import psycopg

    name = f"tether_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as conn:
        version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin_url)
    url = urlunsplit(parts._replace(path=f"/{name}"))
    try:
        yield url, version
    finally:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_settings(url: str) -> dict[str, str]:
    """The server settings that decide what a commit costs."""
    import psycopg

    with psycopg.connect(url, connect_timeout=5) as conn:
        return {
            name: str(conn.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
            for name in ("server_version", "synchronous_commit", "fsync", "wal_sync_method")
        }


def tether_contenders(
    stack: ExitStack, workdir: Path, postgres_url: str | None, postgres_error: str | None
) -> list[Contender]:
    """The bare loop, and Tether on SQLite at NORMAL and FULL and on PostgreSQL."""
    contenders = [Contender("bare", "Python", "the same node functions in a plain loop", bare_loop)]
    for mode in ("NORMAL", "FULL"):
        url = f"sqlite:///{workdir / f'tether-{mode}.db'}"
        session = stack.enter_context(tether_session(url, synchronous=mode))
        contenders.append(
            Contender(
                f"tether-sqlite-{mode.lower()}",
                "Tether",
                f"SQLite, WAL, synchronous={mode}",
                session.run,
                baseline="bare",
                counts=partial(_sqlite_counts, url, mode),
            )
        )
    config = "PostgreSQL, synchronous_commit=on"
    if postgres_url is None:
        contenders.append(
            unavailable("tether-postgres", "Tether", config, postgres_error or "no server")
        )
        return contenders
    try:
        session = stack.enter_context(tether_session(postgres_url))
    except Exception as exc:
        reason = f"cannot open: {type(exc).__name__}: {exc}"
        contenders.append(unavailable("tether-postgres", "Tether", config, reason))
        return contenders
    contenders.append(
        Contender(
            "tether-postgres",
            "Tether",
            config,
            session.run,
            baseline="bare",
            counts=partial(_postgres_counts, postgres_url),
        )
    )
    return contenders


def _sqlite_counts(url: str, synchronous: str) -> dict[str, Any]:
    counter = SqliteStatements()
    with tether_session(url, synchronous=synchronous, sqlite_counter=counter) as session:
        return sqlite_commit_counts(counter, session.run)


def _postgres_counts(url: str) -> dict[str, Any]:
    tracer = PgRoundTrips()
    try:
        with tether_session(url, pg_counter=tracer) as session:
            return pg_round_trip_counts(tracer, session.run)
    finally:
        tracer.close()
