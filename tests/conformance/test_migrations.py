"""Migrating an empty database gives exactly the schema in the backend's ``schema.sql``."""

from __future__ import annotations

import sqlite3
import threading
from importlib import resources
from pathlib import Path

import pytest

from tether import Tether
from tether.storage import open_storage
from tether.storage.base import AppliedMigration
from tests.conftest import PostgresServer
from tests.structure import snapshot
from tests.support import TestDatabase

KNOWN_MIGRATIONS = [AppliedMigration("core", 1, "initial")]


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
) -> TestDatabase:
    if empty_database.backend == "sqlite":
        path = tmp_path / "from-schema.db"
        return TestDatabase("sqlite", f"sqlite:///{path}", path=path)
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.url(server.create_database())
    return TestDatabase("postgres", url, admin_url=url)


def migrate(database: TestDatabase) -> list[AppliedMigration]:
    app, applied = Tether.migrate(url=database.url)
    app.close()
    return applied


def test_migrating_empty_database_equals_loading_schema_sql(
    empty_database: TestDatabase, second_empty_database: TestDatabase
) -> None:
    assert migrate(empty_database) == KNOWN_MIGRATIONS
    load_schema_sql(second_empty_database)

    migrated = snapshot(empty_database)
    loaded = snapshot(second_empty_database)

    assert migrated.keys() == loaded.keys()
    for part in migrated:
        assert migrated[part] == loaded[part], f"{part} differs between migrations and schema.sql"
    assert migrated["versions"] == [("core", 1, "initial")]


def test_snapshot_sees_a_schema_difference(
    empty_database: TestDatabase, second_empty_database: TestDatabase
) -> None:
    migrate(empty_database)
    load_schema_sql(second_empty_database)
    with second_empty_database.raw() as raw:
        raw.execute("CREATE INDEX audit_log_by_actor ON audit_log (tenant_id, actor_id)")

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

    assert [(s.component, s.applied, s.latest) for s in status] == [("core", 1, 1)]


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

    assert [(s.component, s.applied, s.latest) for s in status] == [("core", 0, 1)]


def test_concurrent_migrations_of_a_new_database_all_succeed(
    empty_database: TestDatabase,
) -> None:
    errors: list[BaseException] = []
    applied: list[list[AppliedMigration]] = []
    start = threading.Barrier(6)

    def run() -> None:
        start.wait()
        try:
            applied.append(migrate(empty_database))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [f"{type(exc).__name__}: {exc}" for exc in errors] == []
    assert sorted(applied, key=len) == [[]] * 5 + [KNOWN_MIGRATIONS]
