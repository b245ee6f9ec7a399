"""Fixtures every suite shares.

``backend`` gives each test its own migrated database, once per backend:

- SQLite: a file in the test's ``tmp_path``, made by ``Tether.migrate``.
- PostgreSQL: only when ``TETHER_TEST_POSTGRES_URL`` names a server (as a superuser, e.g.
  ``postgresql://postgres@127.0.0.1:5432/test``). The session migrates one template
  database and each test gets a ``CREATE DATABASE … TEMPLATE`` copy of it under a name
  unique to this run (``tether_t_<random>_dbN``), so concurrent runs never see each other;
  a background thread makes the copies ahead and drops used ones, and every database the
  run made is gone when the session ends. Without the variable the PostgreSQL tests are
  skipped, except under ``CI=true``, where they fail: CI must never silently skip a
  backend.

``--run-slow`` runs the tests marked ``slow`` (``make test-long``).
"""

from __future__ import annotations

import itertools
import os
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import TestDatabase, with_database
from tether import Tether

POSTGRES_ENV = "TETHER_TEST_POSTGRES_URL"
EXAMPLE_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run tests marked slow (soak and chaos runs; `make test-long`)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: needs TETHER_TEST_POSTGRES_URL")
    config.addinivalue_line("markers", "slow: long soak and chaos runs (make test-long)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow test: run with --run-slow (make test-long)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def postgres_url_or_skip() -> str:
    """The admin URL of the test server; skip without one, but fail loudly under CI."""
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if url:
        return url
    if running_in_ci():
        pytest.fail(
            f"CI=true but {POSTGRES_ENV} is not set: the PostgreSQL tests must run in CI, "
            f"never skip. Point it at a server as a superuser, e.g. "
            f"{POSTGRES_ENV}={EXAMPLE_POSTGRES_URL}",
            pytrace=False,
        )
    pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV} (e.g. {EXAMPLE_POSTGRES_URL})")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's TETHER_* settings or writes into the checkout."""
    for name in list(os.environ):
        if name.startswith("TETHER_") and name != POSTGRES_ENV:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


class PostgresServer:
    """Admin access to the test server: databases unique to this run, dropped by it.

    ``CREATE DATABASE … TEMPLATE`` and ``DROP DATABASE`` each take a good fraction of a
    second and block each other, so a background thread does both: it keeps a couple of
    copies of each template ready and drops the databases tests are done with, while the
    tests run. Each copy still goes to exactly one test.
    """

    AHEAD = 2
    WAIT_S = 120.0

    def __init__(self, admin_url: str) -> None:
        import psycopg

        self.admin_url = admin_url
        self.prefix = f"tether_t_{secrets.token_hex(4)}"
        self._numbers = itertools.count(1)
        self._cond = threading.Condition()
        self._ready: dict[str, list[str]] = {}
        self._doomed: list[str] = []
        self._created: set[str] = set()
        self._stopping = False
        self._error: BaseException | None = None
        try:
            self._admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=5)
        except psycopg.Error as exc:
            pytest.fail(
                f"{POSTGRES_ENV}={admin_url} cannot be reached: {exc}".strip(), pytrace=False
            )
        self._admin_lock = threading.Lock()
        self._worker = threading.Thread(target=self._work, name="test databases", daemon=True)
        self._worker.start()

    def unique_name(self, what: str = "db") -> str:
        return f"{self.prefix}_{what}{next(self._numbers)}"

    def url(self, dbname: str, *, user: str | None = None) -> str:
        return with_database(self.admin_url, dbname, user=user)

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._admin_lock:
            cursor = self._admin.execute(sql, params)
            return list(cursor.fetchall()) if cursor.description else []

    def create_database(self, *, template: str = "template0") -> str:
        """A new database copied from ``template`` (usually made before it was asked for)."""
        deadline = time.monotonic() + self.WAIT_S
        with self._cond:
            if template not in self._ready:
                self._ready[template] = []
                self._cond.notify_all()
            while not self._ready[template]:
                if self._error is not None:
                    raise RuntimeError(f"cannot make test databases: {self._error}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no copy of {template} within {self.WAIT_S}s")
                self._cond.wait(remaining)
            return self._ready[template].pop(0)

    def drop_database(self, dbname: str) -> None:
        """Drop ``dbname`` soon, in the background (connections to it are ended)."""
        with self._cond:
            self._doomed.append(dbname)
            self._cond.notify_all()

    def disconnect_all(self, dbname: str) -> None:
        self.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )

    def _next_job(self) -> tuple[str, str] | None:
        """What the worker does next: copy, drop, or (None) stop. Call holding the lock.

        Copies come first, so a test never waits behind a queue of drops.
        """
        while True:
            if not self._stopping:
                for template, ready in self._ready.items():
                    if len(ready) < self.AHEAD:
                        return ("copy", template)
            if self._doomed:
                return ("drop", self._doomed.pop(0))
            if self._stopping:
                return None
            self._cond.wait()

    def _work(self) -> None:
        import psycopg

        try:
            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                while True:
                    with self._cond:
                        job = self._next_job()
                    if job is None:
                        return
                    kind, name = job
                    if kind == "drop":
                        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                        with self._cond:
                            self._created.discard(name)
                        continue
                    copy = self.unique_name()
                    with self._cond:
                        self._created.add(copy)
                    conn.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{name}"')
                    with self._cond:
                        self._ready[name].append(copy)
                        self._cond.notify_all()
        except BaseException as exc:
            with self._cond:
                self._error = exc
                self._cond.notify_all()

    def close(self) -> None:
        """Drop every database this run made, templates and unused copies included."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._worker.join(timeout=self.WAIT_S)
        with self._cond:
            leftovers = sorted(self._created)
        for name in leftovers:
            self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._admin.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer(postgres_url_or_skip())
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> str:
    """A database migrated once per session, copied for each test."""
    name = postgres_server.create_database()
    app, _ = Tether.migrate(url=postgres_server.url(name))
    app.close()
    postgres_server.disconnect_all(name)
    return name


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def backend_name(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        postgres_url_or_skip()
    return str(request.param)


@pytest.fixture
def backend(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[TestDatabase]:
    """A migrated database of its own for this test, on each backend in turn."""
    if backend_name == "sqlite":
        path = tmp_path / "tether.db"
        url = f"sqlite:///{path}"
        app, _ = Tether.migrate(url=url)
        app.close()
        yield TestDatabase("sqlite", url, path=path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    template: str = request.getfixturevalue("postgres_template")
    name = server.create_database(template=template)
    url = server.url(name)
    try:
        yield TestDatabase("postgres", url, admin_url=url)
    finally:
        server.drop_database(name)


@pytest.fixture
def empty_database(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[TestDatabase]:
    """A database with nothing in it: a SQLite path not yet created, or an empty PostgreSQL."""
    if backend_name == "sqlite":
        path = tmp_path / "empty.db"
        yield TestDatabase("sqlite", f"sqlite:///{path}", path=path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database()
    url = server.url(name)
    try:
        yield TestDatabase("postgres", url, admin_url=url)
    finally:
        server.drop_database(name)


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    """The backend's database, opened through the public API."""
    with backend.open() as opened:
        yield opened
