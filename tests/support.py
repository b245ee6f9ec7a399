"""Helpers the test suites share: test databases and raw access that bypasses Tether.

:class:`PostgresServer` makes the PostgreSQL databases of one test run; the fixtures in
``conftest.py`` hand them out. Raw access is how the tests play the attacker (or the
broken disk): it writes to the database directly, as the file's owner on SQLite and as a
PostgreSQL superuser, so the tests can check that Tether notices what it did not write.
"""

from __future__ import annotations

import itertools
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import pytest

from tether import Tether
from tether.config import Settings, load_settings
from tether.principals import Principal, Role

BackendName = Literal["sqlite", "postgres"]
POSTGRES_ENV = "TETHER_TEST_POSTGRES_URL"


def with_database(url: str, dbname: str, *, user: str | None = None) -> str:
    """``url`` pointed at another database (and, if given, as another user, no password)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        host = netloc.rsplit("@", 1)[-1]
        netloc = f"{user}@{host}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{dbname}"))


@dataclass(frozen=True)
class TestDatabase:
    """A database made for one test: where it is and how to open it."""

    __test__ = False

    backend: BackendName
    url: str
    path: Path | None = None
    """The SQLite file (``None`` on PostgreSQL)."""
    admin_url: str | None = None
    """A superuser URL for this very database (PostgreSQL only)."""

    def settings(self, **overrides: object) -> Settings:
        return load_settings(url=self.url, **overrides)

    def open(self, **overrides: object) -> Tether:
        return Tether.open(self.settings(**overrides))

    @contextmanager
    def raw(self) -> Iterator[RawConnection]:
        """A connection that bypasses Tether (file owner / superuser), in autocommit."""
        if self.backend == "sqlite":
            assert self.path is not None
            conn = sqlite3.connect(self.path, isolation_level=None)
            try:
                yield RawConnection("sqlite", conn)
            finally:
                conn.close()
        else:
            import psycopg

            assert self.admin_url is not None
            with psycopg.connect(self.admin_url, autocommit=True) as pg:
                yield RawConnection("postgres", pg)


class RawConnection:
    """Backend-neutral raw SQL: write ``?`` placeholders on either backend."""

    def __init__(self, backend: BackendName, conn: Any) -> None:
        self.backend = backend
        self.conn = conn

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        if self.backend == "postgres":
            sql = sql.replace("?", "%s")
        cursor = self.conn.execute(sql, tuple(params))
        if cursor.description is None:
            return []
        return [tuple(row) for row in cursor.fetchall()]

    def bypass_append_only(self) -> None:
        """Lift the audit log's append-only guard for this connection, as an attacker would."""
        if self.backend == "sqlite":
            self.conn.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
            self.conn.execute("DROP TRIGGER IF EXISTS audit_log_no_delete")
        else:
            self.conn.execute("SET session_replication_role = replica")

    def audit_seqs(self, tenant_id: str) -> list[int]:
        rows = self.execute(
            "SELECT seq FROM audit_log WHERE tenant_id = ? ORDER BY seq", [tenant_id]
        )
        return [int(row[0]) for row in rows]

    def entry_id(self, tenant_id: str, seq: int) -> str:
        rows = self.execute(
            "SELECT entry_id FROM audit_log WHERE tenant_id = ? AND seq = ?", [tenant_id, seq]
        )
        return str(rows[0][0])


def auditor(tenant_id: str) -> Principal:
    """An admin of ``tenant_id`` (the Python API trusts the principal it is given), for
    tests that read a tenant's trail or act on it without caring who does."""
    return Principal(tenant_id, "auditor", frozenset({Role.ADMIN}))


def record(app: Tether, tenant_id: str, count: int, *, actor: str = "alice") -> None:
    """Append ``count`` ordinary entries to a tenant's trail in one transaction."""
    with app.storage.transaction(tenant_id) as txn:
        for number in range(count):
            app.audit.record_txn(
                txn,
                tenant_id=tenant_id,
                actor_id=actor,
                action="case.reviewed",
                target=f"case:C-{number}",
                details={"number": number},
            )


class PostgresServer:
    """Admin access to the test server: databases unique to this run, dropped by it.

    ``CREATE DATABASE … TEMPLATE`` and ``DROP DATABASE`` each take a good fraction of a
    second and block each other, so a background thread does both: it keeps a couple of
    copies of each template ready and drops the databases tests are done with, while the
    tests run. Each copy still goes to exactly one test.
    """

    AHEAD = 2
    WAIT_S = 120.0
    STALE_AFTER = "1 hour"

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
        self._sweep_stale()
        self._worker = threading.Thread(target=self._work, name="test databases", daemon=True)
        self._worker.start()

    def _sweep_stale(self) -> None:
        """Drop what runs killed before their cleanup left behind (an hour old, unused).

        A run that is still going is never touched: its databases are younger than
        ``STALE_AFTER`` or in use, and its role shares a prefix with its databases. A
        database another run drops meanwhile has no file to stat (``missing_ok``): skipped.
        """
        stale = self.execute(
            "SELECT d.datname FROM pg_database d "
            "WHERE d.datname LIKE 'tether\\_t\\_%%' "
            "AND (pg_stat_file('base/' || d.oid || '/PG_VERSION', true)).modification "
            "    < now() - %s::interval "
            "AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)",
            (self.STALE_AFTER,),
        )
        for (name,) in stale:
            self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        orphans = self.execute(
            "SELECT r.rolname FROM pg_roles r WHERE r.rolname LIKE 'tether\\_t\\_%%' "
            "AND NOT EXISTS (SELECT 1 FROM pg_database d "
            "                WHERE d.datname LIKE split_part(r.rolname, '_app_', 1) || '\\_%%')"
        )
        for (role,) in orphans:
            self.execute(f'DROP ROLE IF EXISTS "{role}"')

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
            self._cond.notify_all()  # the worker makes the next copy of this template
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
