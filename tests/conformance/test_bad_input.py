"""Bad settings and unusable databases: a clear error, and nothing changed."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from tests.structure import snapshot
from tests.support import PostgresServer, TestDatabase
from tether import Tether
from tether.errors import (
    ConfigError,
    DatabaseMissing,
    InvalidInput,
    SchemaOutdated,
    SchemaTooNew,
    StorageUnavailable,
)

MALFORMED_URLS = [
    "mysql://x",
    "sqlite://",
    "sqlite:/tether.db",
    "sqlite:///tether.db?mode=memory",
    "postgresql://host:notaport/db",
    "postgresql://host/",
]


def files_in(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.mark.parametrize("url", MALFORMED_URLS)
@pytest.mark.parametrize("how", ["argument", "environment"])
def test_malformed_url_is_a_config_error_and_creates_nothing(
    url: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "environment":
        monkeypatch.setenv("TETHER_URL", url)
    given = url if how == "argument" else None

    with pytest.raises(ConfigError, match="TETHER_URL"):
        Tether.migrate(url=given)
    with pytest.raises(ConfigError, match="TETHER_URL"):
        Tether.open(url=given)

    assert files_in(tmp_path) == []


def test_default_database_is_not_created_by_open(tmp_path: Path) -> None:
    with pytest.raises(DatabaseMissing, match=r"tether migrate"):
        Tether.open()

    assert files_in(tmp_path) == []


def test_missing_sqlite_file_is_database_missing_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.db"

    with pytest.raises(DatabaseMissing) as caught:
        Tether.open(url=f"sqlite:///{path}")

    assert str(path) in caught.value.message
    assert "tether migrate" in caught.value.message
    assert caught.value.exit_code == 7
    assert files_in(tmp_path) == []


def test_migrate_into_a_missing_folder_names_the_folder_and_creates_nothing(
    tmp_path: Path,
) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        Tether.migrate(url=f"sqlite:///{tmp_path}/no/such/folder/tether.db")

    assert files_in(tmp_path) == []


def test_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    before = path.read_bytes()

    with pytest.raises(StorageUnavailable, match="not a SQLite database"):
        Tether.open(url=f"sqlite:///{path}")
    with pytest.raises(StorageUnavailable, match="not a SQLite database"):
        Tether.migrate(url=f"sqlite:///{path}")

    assert path.read_bytes() == before
    assert files_in(tmp_path) == ["notes.db"]


def test_unreachable_postgres_is_unavailable_quickly() -> None:
    url = "postgresql://postgres:s3cret@127.0.0.1:1/test"
    started = time.monotonic()

    with pytest.raises(StorageUnavailable) as caught:
        Tether.open(url=url)
    with pytest.raises(StorageUnavailable):
        Tether.migrate(url=url)

    assert time.monotonic() - started < 10
    assert "127.0.0.1:1" in caught.value.message
    assert "s3cret" not in caught.value.message
    assert caught.value.exit_code == 7


def test_missing_postgres_database_is_database_missing_and_not_created(
    postgres_server: PostgresServer,
) -> None:
    name = postgres_server.unique_name("missing")
    url = postgres_server.url(name)

    with pytest.raises(DatabaseMissing, match="createdb") as caught:
        Tether.open(url=url)
    with pytest.raises(DatabaseMissing):
        Tether.migrate(url=url)

    assert name in caught.value.message
    assert postgres_server.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)) == []


def test_database_from_a_newer_tether_is_refused_and_left_alone(backend: TestDatabase) -> None:
    with backend.open() as app:
        app.tenants.create("acme", admin="alice")
    with backend.raw() as raw:
        raw.execute(
            "INSERT INTO tether_schema_versions (component, version, name, applied_at) "
            "VALUES (?, ?, ?, ?)",
            ["core", 99, "future", "2031-01-01T00:00:00.000000Z"],
        )
    before = snapshot(backend)

    with pytest.raises(SchemaTooNew) as opening:
        backend.open()
    with pytest.raises(SchemaTooNew) as migrating:
        Tether.migrate(url=backend.url)

    for caught in (opening, migrating):
        assert "core v99" in caught.value.message
        assert "Upgrade Tether" in caught.value.message
        assert caught.value.exit_code == 7
    assert snapshot(backend) == before
    with backend.raw() as raw:
        assert raw.execute("SELECT tenant_id FROM tenants ORDER BY tenant_id") == [
            ("_global",),
            ("acme",),
        ]


def test_unmigrated_database_is_schema_outdated_and_left_empty(
    empty_database: TestDatabase,
) -> None:
    if empty_database.backend == "sqlite":
        assert empty_database.path is not None
        sqlite3.connect(empty_database.path).close()
    before = snapshot(empty_database)

    with pytest.raises(SchemaOutdated, match="has no Tether schema; run `tether migrate`"):
        Tether.open(url=empty_database.url)

    assert snapshot(empty_database) == before


def test_database_behind_this_code_is_schema_outdated(backend: TestDatabase) -> None:
    with backend.raw() as raw:
        component, version = raw.execute(
            "SELECT component, MAX(version) FROM tether_schema_versions "
            "GROUP BY component ORDER BY component"
        )[-1]
        raw.execute(
            "DELETE FROM tether_schema_versions WHERE component = ? AND version = ?",
            [component, version],
        )

    with pytest.raises(SchemaOutdated, match="run `tether migrate`") as caught:
        backend.open()

    assert f"{component} v{version - 1} -> v{version}" in caught.value.message
