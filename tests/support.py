"""Helpers the test suites share: a test database and raw access that bypasses Tether.

Raw access is how the tests play the attacker (or the broken disk): it writes to the
database directly, as the file's owner on SQLite and as a PostgreSQL superuser, so the
tests can check that Tether notices what it did not write itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from tether import Tether
from tether.config import Settings, load_settings

BackendName = Literal["sqlite", "postgres"]


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
