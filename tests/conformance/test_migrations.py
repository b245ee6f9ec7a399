"""Migrating an empty database gives exactly the schema in the backend's ``schema.sql``."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from tests.structure import snapshot
from tests.support import PostgresServer, TestDatabase
from tether import Tether
from tether.keys import read_key_file
from tether.storage import open_storage
from tether.storage.base import AppliedMigration

MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def shipped_migrations(backend: str) -> list[AppliedMigration]:
    """Every migration file the backend ships, read from the package folders."""
    root = resources.files(f"tether.storage.{backend}").joinpath("migrations")
    found = []
    for folder in root.iterdir():
        for entry in folder.iterdir():
            match = MIGRATION_FILE.match(entry.name)
            if match:
                found.append(AppliedMigration(folder.name, int(match[1]), match[2]))
    return found


def schema_sql(backend: str) -> str:
    return resources.files(f"tether.storage.{backend}").joinpath("schema.sql").read_text("utf-8")


def load_schema_sql(database: TestDatabase) -> None:
    """Build a database the other way: from the maintained ``schema.sql``."""
    if database.backend == "sqlite":
        assert database.path is not None
        conn = sqlite3.connect(database.path)
        try:
            conn.executescript(schema_sql("sqlite"))
        finally:
            conn.close()
        return
    with database.raw() as raw:
        raw.conn.execute(schema_sql("postgres"))


@pytest.fixture
def second_empty_database(
    empty_database: TestDatabase, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[TestDatabase]:
    if empty_database.backend == "sqlite":
        path = tmp_path / "from-schema.db"
        yield TestDatabase("sqlite", f"sqlite:///{path}", path=path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database()
    url = server.url(name)
    try:
        yield TestDatabase("postgres", url, admin_url=url)
    finally:
        server.drop_database(name)


def migrate(database: TestDatabase) -> list[AppliedMigration]:
    app, applied = Tether.migrate(url=database.url)
    app.close()
    return applied


def test_migrating_empty_database_equals_loading_schema_sql(
    empty_database: TestDatabase, second_empty_database: TestDatabase
) -> None:
    applied = migrate(empty_database)
    load_schema_sql(second_empty_database)

    migrated = snapshot(empty_database)
    loaded = snapshot(second_empty_database)

    assert migrated.keys() == loaded.keys()
    for part in migrated:
        assert migrated[part] == loaded[part], f"{part} differs between migrations and schema.sql"
    assert migrated["versions"] == sorted((m.component, m.version, m.name) for m in applied)


def test_every_shipped_migration_file_is_applied(empty_database: TestDatabase) -> None:
    shipped = shipped_migrations(empty_database.backend)

    applied = migrate(empty_database)

    assert sorted(applied, key=repr) == sorted(shipped, key=repr)
    for component in {migration.component for migration in applied}:
        versions = [m.version for m in applied if m.component == component]
        assert versions == list(range(1, len(versions) + 1)), f"{component} applied out of order"


def test_snapshot_sees_a_schema_difference(
    empty_database: TestDatabase, second_empty_database: TestDatabase
) -> None:
    migrate(empty_database)
    load_schema_sql(second_empty_database)
    with second_empty_database.raw() as raw:
        raw.execute("CREATE INDEX audit_log_extra ON audit_log (tenant_id, at)")

    assert snapshot(empty_database) != snapshot(second_empty_database)


def test_second_migrate_applies_nothing_and_changes_nothing(empty_database: TestDatabase) -> None:
    migrate(empty_database)
    before = snapshot(empty_database)
    with empty_database.raw() as raw:
        stamps = raw.execute("SELECT component, version, applied_at FROM tether_schema_versions")

    assert migrate(empty_database) == []

    assert snapshot(empty_database) == before
    with empty_database.raw() as raw:
        again = raw.execute("SELECT component, version, applied_at FROM tether_schema_versions")
    assert again == stamps


def test_migrate_keeps_existing_data(backend: TestDatabase) -> None:
    with backend.open() as app:
        app.tenants.create("acme", admin="alice")

    assert migrate(backend) == []

    with backend.open() as app:
        assert app.tenants.principal("acme", "alice").principal_id == "alice"
        assert app.audit.verify("acme").ok


def test_migrated_database_reports_a_current_schema(backend: TestDatabase) -> None:
    with backend.open() as app:
        status = app.storage.schema_status()

    assert {s.component for s in status} >= {"core"}
    assert all(s.applied == s.latest >= 1 for s in status)


def test_migrate_gives_the_database_a_subject_key_once(empty_database: TestDatabase) -> None:
    migrate(empty_database)
    with Tether.open(url=empty_database.url) as app:
        first = app.audit.subject_hash("acme", "patient-1")

    migrate(empty_database)

    with Tether.open(url=empty_database.url) as app:
        assert app.audit.subject_hash("acme", "patient-1") == first


def test_schema_status_of_an_empty_database_names_what_is_missing(
    empty_database: TestDatabase,
) -> None:
    if empty_database.backend == "sqlite":
        assert empty_database.path is not None
        sqlite3.connect(empty_database.path).close()
    storage = open_storage(empty_database.settings())
    try:
        status = storage.schema_status()
    finally:
        storage.close()

    assert "core" in {s.component for s in status}
    assert all(s.applied == 0 and s.latest >= 1 for s in status)


def test_concurrent_migrations_of_a_new_database_all_succeed(
    empty_database: TestDatabase, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # Several workers starting at once on a new database all run `migrate`. A race shows
    # only sometimes, so SQLite (cheap to create) gets several fresh databases.
    if empty_database.backend == "sqlite":
        databases = [
            TestDatabase("sqlite", f"sqlite:///{path}", path=path)
            for path in (tmp_path / f"race-{number}.db" for number in range(10))
        ]
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        urls = [server.url(server.create_database()) for _ in range(2)]
        databases = [empty_database, *(TestDatabase("postgres", u, admin_url=u) for u in urls)]
    check_concurrent_first_migrations(databases)


def check_concurrent_first_migrations(databases: list[TestDatabase]) -> None:
    """Six migrations at once per database: all succeed, one does the work, schema current."""
    for database in databases:
        errors, applied = migrate_at_once(database, workers=6)

        assert errors == []
        by_size = sorted(applied, key=len)
        assert by_size[:5] == [[]] * 5
        assert by_size[5] != []
        Tether.open(url=database.url).close()


def migrate_at_once(
    database: TestDatabase, *, workers: int
) -> tuple[list[str], list[list[AppliedMigration]]]:
    """Start ``workers`` migrations of ``database`` at the same moment; collect outcomes."""
    errors: list[str] = []
    applied: list[list[AppliedMigration]] = []
    start = threading.Barrier(workers)

    def run() -> None:
        start.wait()
        try:
            applied.append(migrate(database))
        except BaseException as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors, applied


@pytest.mark.slow
def test_many_concurrent_first_migrations_of_sqlite_files_all_succeed(tmp_path: Path) -> None:
    # Chaos version of the test above: a rarer race (switching a new file to WAL mode)
    # shows only once in a few hundred rounds.
    databases = [
        TestDatabase("sqlite", f"sqlite:///{path}", path=path)
        for path in (tmp_path / f"race-{number}.db" for number in range(400))
    ]
    check_concurrent_first_migrations(databases)


def test_concurrent_first_migrations_create_one_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a configured key, each of several first migrations may try to create the
    # key file beside the database; one does, and all of them then use its key.
    monkeypatch.delenv("TETHER_KEY_FILE")
    path = tmp_path / "new.db"
    database = TestDatabase("sqlite", f"sqlite:///{path}", path=path)

    errors, applied = migrate_at_once(database, workers=6)

    assert errors == []
    assert sorted(map(len, applied))[:5] == [0] * 5
    key_file = tmp_path / "new.db.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    with Tether.open(url=database.url) as app:
        assert app.keyring.master == read_key_file(key_file).master


def test_migrate_of_a_new_sqlite_file_waits_for_another_writer(tmp_path: Path) -> None:
    # Another process holds the write lock of a file not yet in WAL mode (it is just
    # creating it). Switching to WAL must wait for it, up to busy_timeout, like any write.
    path = tmp_path / "shared.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    outcome: list[str] = []

    def run() -> None:
        try:
            migrate(TestDatabase("sqlite", f"sqlite:///{path}", path=path))
            outcome.append("migrated")
        except BaseException as exc:
            outcome.append(f"{type(exc).__name__}: {exc}")

    migrating = threading.Thread(target=run)
    migrating.start()
    migrating.join(timeout=0.5)  # let it reach the lock; it must still be waiting then
    other.execute("COMMIT")
    other.close()
    migrating.join()

    assert outcome == ["migrated"]
