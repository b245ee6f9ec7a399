"""The audit trail is keyed outside the database: what the application's own privileges
(or a writer of the SQLite file) cannot forge, and how trails written before keys verify.

The attacker here can write the database as the application does (the ``tether_app`` role
on PostgreSQL; the file on SQLite, where it can also drop the append-only triggers) and
knows how entries are hashed, but does not hold the master key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.support import PostgresServer, TestDatabase, auditor, record
from tether import Tether, canonical
from tether.audit.chain import GENESIS, entry_hash, legacy_hash
from tether.clock import format_timestamp, parse_timestamp
from tether.errors import ConfigError
from tether.keys import Keyring, read_key_file
from tether.storage._sqlfile import load_migrations
from tether.storage.base import AuditRow

ATTACKER = Keyring(b"a key the attacker made up itself")


def _own_key(row: AuditRow) -> str:
    return entry_hash(row, ATTACKER)


def _own_key_under_the_real_id(real_id: str) -> Callable[[AuditRow], str]:
    def sign(row: AuditRow) -> str:
        return entry_hash(row, ATTACKER).replace(ATTACKER.current_id, real_id)

    return sign


@pytest.fixture
def acme(app: Tether) -> Tether:
    app.tenants.create("acme", admin="alice")
    record(app, "acme", 3)
    return app


AT = datetime(2031, 5, 1, 12, 0, tzinfo=UTC)
COLUMNS = (
    "tenant_id, seq, entry_id, at, actor_id, action, target, details, subjects, prev_hash, "
    "entry_hash"
)


class AsApplication:
    """SQL with the application's privileges: ``tether_app`` inside a tenant transaction on
    PostgreSQL, the database file itself on SQLite. Write ``?`` placeholders."""

    def __init__(self, backend: str, execute: Callable[[str, tuple[Any, ...]], list[Any]]) -> None:
        self.backend = backend
        self._execute = execute

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self._execute(sql, params)

    def rows(self, tenant_id: str) -> list[AuditRow]:
        found = self.execute(
            f"SELECT {COLUMNS} FROM audit_log WHERE tenant_id = ? ORDER BY seq", (tenant_id,)
        )
        return [
            AuditRow(
                tenant_id=str(r[0]),
                seq=int(r[1]),
                entry_id=str(r[2]),
                at=parse_timestamp(r[3]) if isinstance(r[3], str) else r[3],
                actor_id=str(r[4]),
                action=str(r[5]),
                target=str(r[6]),
                details_json=str(r[7]),
                subjects_json=str(r[8]),
                prev_hash=str(r[9]),
                entry_hash=str(r[10]),
            )
            for r in found
        ]

    def insert(self, row: AuditRow) -> None:
        at: object = row.at if self.backend == "postgres" else format_timestamp(row.at)
        self.execute(
            f"INSERT INTO audit_log ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.tenant_id,
                row.seq,
                row.entry_id,
                at,
                row.actor_id,
                row.action,
                row.target,
                row.details_json,
                row.subjects_json,
                row.prev_hash,
                row.entry_hash,
            ),
        )

    def move_head(self, tenant_id: str, seq: int, head: str) -> None:
        self.execute(
            "UPDATE tenants SET audit_seq = ?, audit_head = ? WHERE tenant_id = ?",
            (seq, head, tenant_id),
        )


@contextmanager
def as_application(app: Tether, backend: TestDatabase) -> Iterator[AsApplication]:
    if backend.backend == "sqlite":
        with backend.raw() as raw:
            yield AsApplication("sqlite", lambda sql, params: raw.execute(sql, params))
        return
    with app.storage.transaction("acme") as txn:
        conn = txn.connection  # type: ignore[attr-defined]

        def execute(sql: str, params: tuple[Any, ...]) -> list[Any]:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            if cursor.description is None:
                return []
            return [tuple(row.values()) for row in cursor.fetchall()]

        role = execute("SELECT current_user", ())
        assert role == [("tether_app",)]
        yield AsApplication("postgres", execute)


def forged_row(seq: int, prev_hash: str, sign: Callable[[AuditRow], str]) -> AuditRow:
    unsigned = AuditRow(
        tenant_id="acme",
        seq=seq,
        entry_id=f"0190f000-0000-7000-8000-{seq:012d}",
        at=AT,
        actor_id="alice",
        action="case.closed",
        target="case:C-1",
        details_json=canonical.dumps({"approved": True}),
        subjects_json=canonical.dumps([]),
        prev_hash=prev_hash,
        entry_hash="",
    )
    return dataclasses.replace(unsigned, entry_hash=sign(unsigned))


SIGNERS = ["plain-sha256", "own-key", "own-key-under-the-real-key-id"]


def signer(name: str, app: Tether) -> Callable[[AuditRow], str]:
    if name == "plain-sha256":
        return legacy_hash
    if name == "own-key":
        return _own_key
    return _own_key_under_the_real_id(app.keyring.current_id)


@pytest.mark.parametrize("move_head", [True, False], ids=["head-moved", "head-left"])
@pytest.mark.parametrize("how", SIGNERS)
def test_an_entry_forged_with_the_applications_privileges_is_named(
    acme: Tether, backend: TestDatabase, how: str, move_head: bool
) -> None:
    with as_application(acme, backend) as sql:
        last = sql.rows("acme")[-1]
        forged = forged_row(last.seq + 1, last.entry_hash, signer(how, acme))
        sql.insert(forged)
        if move_head:
            sql.move_head("acme", forged.seq, forged.entry_hash)

    report = acme.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.seq == forged.seq
    assert report.problem.entry_id == forged.entry_id
    assert report.problem.kind in {"forged", "edited"}


def test_an_edited_trail_rechained_with_plain_sha256_is_named(
    acme: Tether, backend: TestDatabase
) -> None:
    # The file's writer drops the append-only guard, edits an entry and recomputes the
    # whole chain the way it was computed before keys, then moves the head.
    with backend.raw() as raw:
        raw.bypass_append_only()
        sql = AsApplication(backend.backend, lambda q, p: raw.execute(q, p))
        rows = sql.rows("acme")
        previous = GENESIS
        for row in rows:
            changed = dataclasses.replace(row, prev_hash=previous, entry_hash="")
            if row.seq == 2:
                changed = dataclasses.replace(changed, details_json='{"roles":["viewer"]}')
            changed = dataclasses.replace(changed, entry_hash=legacy_hash(changed))
            raw.execute(
                "UPDATE audit_log SET details = ?, prev_hash = ?, entry_hash = ? "
                "WHERE tenant_id = ? AND seq = ?",
                [changed.details_json, changed.prev_hash, changed.entry_hash, "acme", row.seq],
            )
            previous = changed.entry_hash
        sql.move_head("acme", rows[-1].seq, previous)

    report = acme.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.kind == "forged"
    assert report.problem.seq in {1, rows[-1].seq}


def test_tether_audit_verify_names_the_forged_entry(acme: Tether, backend: TestDatabase) -> None:
    with as_application(acme, backend) as sql:
        last = sql.rows("acme")[-1]
        forged = forged_row(last.seq + 1, last.entry_hash, legacy_hash)
        sql.insert(forged)
        sql.move_head("acme", forged.seq, forged.entry_hash)

    result = subprocess.run(
        [sys.executable, "-m", "tether.cli.main", "audit", "verify", "--tenant", "acme"],
        env=cli_environment(backend),
        capture_output=True,
        text=True,
        timeout=60,
    )

    said = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 8
    assert f"entry #{forged.seq}" in said


def cli_environment(backend: TestDatabase) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    env["TETHER_URL"] = backend.url
    return env


def make_unkeyed(backend: TestDatabase, tenant_id: str) -> list[AuditRow]:
    """Rewrite a tenant's trail as a database from before keys holds it: plain SHA-256."""
    with backend.raw() as raw:
        raw.bypass_append_only()
        sql = AsApplication(backend.backend, lambda q, p: raw.execute(q, p))
        rows = sql.rows(tenant_id)
        previous = GENESIS
        rewritten = []
        for row in rows:
            changed = dataclasses.replace(row, prev_hash=previous, entry_hash="")
            changed = dataclasses.replace(changed, entry_hash=legacy_hash(changed))
            raw.execute(
                "UPDATE audit_log SET prev_hash = ?, entry_hash = ? "
                "WHERE tenant_id = ? AND seq = ?",
                [changed.prev_hash, changed.entry_hash, tenant_id, row.seq],
            )
            rewritten.append(changed)
            previous = changed.entry_hash
        sql.move_head(tenant_id, rows[-1].seq, previous)
    return rewritten


def test_a_trail_written_before_keys_verifies_after_migrate(
    acme: Tether, backend: TestDatabase
) -> None:
    acme.tenants.create("globex", admin="gina")
    unkeyed = make_unkeyed(backend, "acme")
    acme.close()

    app, _ = Tether.migrate(backend.settings())
    with app:
        record(app, "acme", 2)
        report = app.audit.verify("acme")
        entries = app.audit.entries(auditor("acme"))
        globex = app.audit.entries(auditor("globex"))

    assert report.ok
    assert [e.entry_hash for e in entries[: len(unkeyed)]] == [r.entry_hash for r in unkeyed]
    seal = entries[len(unkeyed)]
    assert seal.action == "audit.keyed"
    assert seal.prev_hash == unkeyed[-1].entry_hash
    assert seal.details["unkeyed_entries"] == len(unkeyed)
    assert all(e.entry_hash.startswith("hmac-sha256:") for e in entries[len(unkeyed) :])
    assert "audit.keyed" not in [e.action for e in globex]


def test_a_sealed_trail_still_names_a_plain_entry_appended_later(
    acme: Tether, backend: TestDatabase
) -> None:
    make_unkeyed(backend, "acme")
    acme.close()
    app, _ = Tether.migrate(backend.settings())
    with app, as_application(app, backend) as sql:
        last = sql.rows("acme")[-1]
        forged = forged_row(last.seq + 1, last.entry_hash, legacy_hash)
        sql.insert(forged)
        sql.move_head("acme", forged.seq, forged.entry_hash)
    with backend.open() as reopened:
        report = reopened.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.kind == "forged"
    assert report.problem.seq == forged.seq


# -- keys on SQLite ----------------------------------------------------------------------


def test_first_migrate_creates_a_private_key_file_beside_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TETHER_KEY_FILE")
    url = f"sqlite:///{tmp_path / 'fresh.db'}"

    app, _ = Tether.migrate(url=url)
    app.close()

    key_file = tmp_path / "fresh.db.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    with Tether.open(url=url) as reopened:
        assert reopened.keyring.master == read_key_file(key_file).master
    assert key_file.read_bytes().hex() not in (tmp_path / "fresh.db").read_bytes().hex()


def test_an_older_databases_subject_key_moves_into_the_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before keys left the database, SQLite kept a random subject-hash key in tether_meta.
    # Migrating moves it to the new key file (so old subject hashes still match) and
    # deletes it from the database.
    monkeypatch.delenv("TETHER_KEY_FILE")
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    monkeypatch.setenv("TETHER_SECRET_KEY", "only to create the tables: 32 bytes")
    Tether.migrate(url=url)[0].close()
    monkeypatch.delenv("TETHER_SECRET_KEY")
    old_key = bytes(range(32))
    database = TestDatabase("sqlite", url, path=path)
    with database.raw() as raw:
        raw.execute("DELETE FROM tether_schema_versions WHERE component = 'core' AND version >= 2")
        raw.execute("DROP TABLE api_keys")  # core 0004's, to be made again
        raw.execute("DROP INDEX audit_log_by_target")  # core 0005's
        raw.execute("DROP INDEX audit_log_by_actor")
        raw.execute(
            "INSERT INTO tether_meta (key, value) VALUES ('subject_hash_key', ?)", [old_key.hex()]
        )

    app, applied = Tether.migrate(url=url)
    with app:
        subject_hash = app.audit.subject_hash("acme", "patient-1")
    with database.raw() as raw:
        left = raw.execute("SELECT count(*) FROM tether_meta WHERE key = 'subject_hash_key'")

    assert [(m.component, m.version) for m in applied] == [
        ("core", 2),
        ("core", 3),
        ("core", 4),
        ("core", 5),
    ]
    assert read_key_file(tmp_path / "old.db.key").master == old_key
    assert subject_hash == hmac.new(old_key, b"acme\x00patient-1", hashlib.sha256).hexdigest()
    assert left == [(0,)]


def test_a_missing_key_file_is_refused_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TETHER_KEY_FILE")
    url = f"sqlite:///{tmp_path / 'lost.db'}"
    Tether.migrate(url=url)[0].close()
    (tmp_path / "lost.db.key").unlink()

    with pytest.raises(ConfigError, match=r"key file .* is missing"):
        Tether.open(url=url)


def test_a_key_file_others_can_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TETHER_KEY_FILE")
    url = f"sqlite:///{tmp_path / 'open.db'}"
    Tether.migrate(url=url)[0].close()
    (tmp_path / "open.db.key").chmod(0o644)

    with pytest.raises(ConfigError, match="chmod 600"):
        Tether.open(url=url)


# -- a PostgreSQL database from before keys ----------------------------------------------


AFTER_KEYS = frozenset({"operations", "langgraph"})
"""Components whose first migration came after keys (they rely on ``tether_tenant()``)."""


@pytest.mark.postgres
def test_a_postgres_database_from_before_keys_upgrades_and_its_trail_verifies(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every migration up to this change, then data as the code before it wrote it: a
    # SHA-256 chain, and the random subject-hash key kept in tether_meta.
    name = postgres_server.create_database()
    url = postgres_server.url(name)
    database = TestDatabase("postgres", url, admin_url=url)
    old_key = bytes(range(100, 132))
    try:
        with database.raw() as raw:
            raw.conn.execute(
                resources.files("tether.storage.postgres").joinpath("bootstrap.sql").read_text()
            )
            upgraded: set[str] = set()
            for migration in load_migrations("tether.storage.postgres"):
                if (
                    migration.name in ("signed_tenant", "transaction_bound_tenant")
                    or migration.component in AFTER_KEYS
                ):
                    upgraded.add(migration.component)
                if migration.component in upgraded:
                    continue  # this change, and what came after it, are the upgrade
                raw.conn.execute(migration.sql)
                raw.execute(
                    "INSERT INTO tether_schema_versions VALUES (?, ?, ?, now())",
                    [migration.component, migration.version, migration.name],
                )
            raw.execute("INSERT INTO tether_meta VALUES ('subject_hash_key', ?)", [old_key.hex()])
            raw.execute(
                "INSERT INTO tenants (tenant_id, name, created_at, created_by) "
                "VALUES ('acme', 'acme', now(), 'system')"
            )
            sql = AsApplication("postgres", lambda q, p: raw.execute(q, p))
            previous = GENESIS
            for seq in (1, 2, 3):
                row = forged_row(seq, previous, legacy_hash)
                sql.insert(row)
                previous = row.entry_hash
            sql.move_head("acme", 3, previous)
        monkeypatch.setenv("TETHER_KEY_FILE", str(tmp_path / "moved.key"))

        app, applied = Tether.migrate(url=url)
        with app:
            record(app, "acme", 1)
            report = app.audit.verify("acme")
            actions = [entry.action for entry in app.audit.entries(auditor("acme"))]
            subject_hash = app.audit.subject_hash("acme", "patient-1")
        with database.raw() as raw:
            left = raw.execute("SELECT count(*) FROM tether_meta")

        assert {(m.component, m.name) for m in applied} >= {
            ("core", "signed_tenant"),
            ("core", "transaction_bound_tenant"),
        }
        assert report.ok, report.problem
        assert actions == ["case.closed"] * 3 + ["audit.keyed", "case.reviewed"]
        assert read_key_file(tmp_path / "moved.key").master == old_key
        assert subject_hash == hmac.new(old_key, b"acme\x00patient-1", hashlib.sha256).hexdigest()
        assert left == [(0,)]
    finally:
        postgres_server.drop_database(name)
