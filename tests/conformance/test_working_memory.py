"""Working memory: one suite over every store (SQLite, PostgreSQL, Redis).

The SQL stores run on the test's own database with a :class:`~tether.FakeClock`, so time
passes without waiting. Redis decides expiry by its own server clock, so on Redis the
tests use real short TTLs and let that time really pass (under a second per test).

Redis runs when ``TETHER_TEST_REDIS_URL`` names a server (e.g. ``redis://127.0.0.1:6379/0``);
without it the Redis tests are skipped, except under ``CI=true``, where they fail, as the
PostgreSQL tests do. Each Redis test writes under a key prefix of its own and deletes
every key under it afterwards, so parallel runs sharing one server never see each other.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running_in_ci
from tests.support import PostgresServer, TestDatabase, auditor
from tether import FakeClock, Tether
from tether.config import load_settings
from tether.errors import ConfigError, InvalidInput, StorageUnavailable
from tether.storage import open_storage
from tether.working import SqlWorkingStore, WorkingMemory
from tether.working.redis_store import RedisWorkingStore

REDIS_ENV = "TETHER_TEST_REDIS_URL"
EXAMPLE_REDIS_URL = "redis://127.0.0.1:6379/0"
# Read at import: the suite's autouse fixture hides every TETHER_* variable from tests.
REDIS_URL = os.environ.get(REDIS_ENV, "").strip()

SHORT_TTL_S = 0.3
"""A TTL that has certainly passed after :data:`PAST_SHORT_TTL_S` on every store."""
PAST_SHORT_TTL_S = 0.5
LONG_TTL_S = 3600.0
"""A TTL that certainly has not passed while a test runs."""


def redis_url_or_skip() -> str:
    if REDIS_URL:
        return REDIS_URL
    if running_in_ci():
        pytest.fail(
            f"CI=true but {REDIS_ENV} is not set: the Redis tests must run in CI, never "
            f"skip. Point it at a server, e.g. {REDIS_ENV}={EXAMPLE_REDIS_URL}",
            pytrace=False,
        )
    pytest.skip(f"Redis tests need {REDIS_ENV} (e.g. {EXAMPLE_REDIS_URL})")


@dataclass
class Store:
    """One working-memory store under test, and how to make time pass for it."""

    name: str
    app: Tether
    pass_time: Callable[[float], None]
    stored: Callable[[], int]
    """How many entries (or Redis keys) the store physically holds, expired ones included."""
    database: TestDatabase

    @property
    def working(self) -> WorkingMemory:
        return self.app.working


def sql_stored(database: TestDatabase) -> Callable[[], int]:
    def count() -> int:
        with database.raw() as raw:
            return int(raw.execute("SELECT count(*) FROM working_memory")[0][0])

    return count


def migrated_sqlite(tmp_path: Path) -> TestDatabase:
    path = tmp_path / "tether.db"
    url = f"sqlite:///{path}"
    Tether.migrate(url=url)[0].close()
    return TestDatabase("sqlite", url, path=path)


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix of this test's own on the test Redis; every key under it is deleted."""
    import redis

    url = redis_url_or_skip()
    prefix = f"tether-test-{secrets.token_hex(6)}:"
    yield prefix
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def redis_keys(prefix: str) -> list[str]:
    import redis

    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        return sorted(client.scan_iter(match=f"{prefix}*", count=1000))
    finally:
        client.close()


SQLITE = pytest.param("sqlite", id="sqlite")
POSTGRES = pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)
REDIS = pytest.param("redis", id="redis")


@contextmanager
def opened_store(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An app whose working memory is the store ``name``, on a database of the test's own."""
    if name == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        template: str = request.getfixturevalue("postgres_template")
        dbname = server.create_database(template=template)
        url = server.url(dbname)
        database = TestDatabase("postgres", url, admin_url=url)
    else:
        database = migrated_sqlite(tmp_path)
    try:
        if name == "redis":
            prefix: str = request.getfixturevalue("redis_prefix")
            settings = database.settings(embedder="none", redis_url=REDIS_URL, redis_prefix=prefix)
            with Tether.open(settings) as app:
                yield Store(name, app, time.sleep, lambda: len(redis_keys(prefix)), database)
        else:
            clock = FakeClock()
            with Tether.open(database.settings(embedder="none"), clock=clock) as app:
                yield Store(name, app, clock.advance, sql_stored(database), database)
    finally:
        if name == "postgres":
            server.drop_database(dbname)


@pytest.fixture(params=[SQLITE, POSTGRES, REDIS])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with opened_store(str(request.param), request, tmp_path) as opened:
        yield opened


@pytest.fixture(params=[SQLITE, POSTGRES])
def sql_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with opened_store(str(request.param), request, tmp_path) as opened:
        yield opened


@pytest.fixture(params=[POSTGRES])
def postgres_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with opened_store(str(request.param), request, tmp_path) as opened:
        yield opened


@pytest.fixture(params=[REDIS])
def redis_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with opened_store(str(request.param), request, tmp_path) as opened:
        yield opened


def test_the_store_is_the_configured_one(store: Store) -> None:
    expected = RedisWorkingStore if store.name == "redis" else SqlWorkingStore
    assert isinstance(store.working.store, expected)


def test_values_round_trip_as_json(store: Store) -> None:
    wm = store.working
    values: dict[str, Any] = {
        "plan": {"steps": ["look up", "refund"], "done": 1, "nested": {"b": 2, "a": [None]}},
        "count": 3,
        "ratio": 0.25,
        "note": 'Grüße, 東京 "quoted" and a\nnewline',
        "flag": False,
        "nothing": None,
        "list": [1, "two", {"three": 3}],
    }
    for key, value in values.items():
        wm.set(auditor("acme"), "thread-1", key, value)

    assert wm.items(auditor("acme"), "thread-1") == values
    assert wm.keys(auditor("acme"), "thread-1") == sorted(values)
    assert wm.get(auditor("acme"), "thread-1", "plan") == values["plan"]
    assert wm.get_many(auditor("acme"), "thread-1", ["count", "missing", "note"]) == {
        "count": 3,
        "note": values["note"],
    }
    assert wm.get(auditor("acme"), "thread-1", "missing") is None
    assert wm.get(auditor("acme"), "thread-1", "missing", default="fallback") == "fallback"
    assert wm.get(auditor("acme"), "thread-2", "plan") is None
    entry = wm.entry(auditor("acme"), "thread-1", "count")
    assert entry is not None and entry.value == 3 and entry.expires_at is None


def test_set_replaces_the_value_and_its_expiry(store: Store) -> None:
    wm = store.working
    wm.set(auditor("acme"), "t", "draft", {"v": 1}, ttl_s=SHORT_TTL_S)
    wm.set(auditor("acme"), "t", "draft", {"v": 2})

    store.pass_time(PAST_SHORT_TTL_S)

    assert wm.get(auditor("acme"), "t", "draft") == {"v": 2}
    assert wm.entries(auditor("acme"), "t")[0].expires_at is None


def test_an_expired_entry_is_invisible_everywhere(store: Store) -> None:
    wm = store.working
    wm.set(auditor("acme"), "t", "short", "gone soon", ttl_s=SHORT_TTL_S)
    wm.set(auditor("acme"), "t", "long", "stays", ttl_s=LONG_TTL_S)
    wm.set(auditor("acme"), "t", "forever", "stays too")
    before = wm.entry(auditor("acme"), "t", "short")
    assert before is not None and before.expires_at is not None

    store.pass_time(PAST_SHORT_TTL_S)

    assert wm.get(auditor("acme"), "t", "short") is None
    assert wm.entry(auditor("acme"), "t", "short") is None
    assert wm.get_many(auditor("acme"), "t", ["short", "long"]) == {"long": "stays"}
    assert wm.items(auditor("acme"), "t") == {"forever": "stays too", "long": "stays"}
    assert wm.keys(auditor("acme"), "t") == ["forever", "long"]
    assert [e.key for e in wm.export_sessions(auditor("acme"), ["t"])["t"]] == ["forever", "long"]
    assert wm.touch(auditor("acme"), "t", "short", ttl_s=LONG_TTL_S) is False
    assert wm.delete(auditor("acme"), "t", "short") is False
    assert wm.get(auditor("acme"), "t", "short") is None


def test_touch_extends_shortens_or_removes_the_expiry(store: Store) -> None:
    wm = store.working
    wm.set(auditor("acme"), "t", "extended", 1, ttl_s=SHORT_TTL_S)
    wm.set(auditor("acme"), "t", "kept", 2, ttl_s=SHORT_TTL_S)
    wm.set(auditor("acme"), "t", "shortened", 3, ttl_s=LONG_TTL_S)

    assert wm.touch(auditor("acme"), "t", "extended", ttl_s=LONG_TTL_S) is True
    assert wm.touch(auditor("acme"), "t", "kept", ttl_s=None) is True
    assert wm.touch(auditor("acme"), "t", "shortened", ttl_s=SHORT_TTL_S) is True
    assert wm.touch(auditor("acme"), "t", "missing", ttl_s=LONG_TTL_S) is False
    extended = wm.entry(auditor("acme"), "t", "extended")
    assert extended is not None and extended.expires_at is not None
    assert extended.expires_at - store.app.clock.now() > timedelta(seconds=LONG_TTL_S / 2)

    store.pass_time(PAST_SHORT_TTL_S)

    assert wm.items(auditor("acme"), "t") == {"extended": 1, "kept": 2}
    kept = wm.entry(auditor("acme"), "t", "kept")
    assert kept is not None and kept.expires_at is None
    assert wm.keys(auditor("acme"), "t-missing") == []


def test_delete_and_clear(store: Store) -> None:
    wm = store.working
    for key in ("a", "b", "c"):
        wm.set(auditor("acme"), "one", key, key.upper())
    wm.set(auditor("acme"), "two", "a", "other session")

    assert wm.delete(auditor("acme"), "one", "a") is True
    assert wm.delete(auditor("acme"), "one", "a") is False
    assert wm.keys(auditor("acme"), "one") == ["b", "c"]
    assert wm.clear(auditor("acme"), "one") == 2
    assert wm.clear(auditor("acme"), "one") == 0

    assert wm.items(auditor("acme"), "one") == {}
    assert wm.items(auditor("acme"), "two") == {"a": "other session"}
    wm.set(auditor("acme"), "one", "b", "again")
    assert wm.items(auditor("acme"), "one") == {"b": "again"}


def test_another_tenant_can_neither_read_nor_change_an_entry(store: Store) -> None:
    wm = store.working
    wm.set(auditor("acme"), "thread-1", "secret", {"card": "4111"}, ttl_s=LONG_TTL_S)
    wm.set(auditor("acme"), "thread-1", "plan", "refund")

    assert wm.get(auditor("globex"), "thread-1", "secret") is None
    assert wm.entry(auditor("globex"), "thread-1", "secret") is None
    assert wm.get_many(auditor("globex"), "thread-1", ["secret", "plan"]) == {}
    assert wm.items(auditor("globex"), "thread-1") == {}
    assert wm.keys(auditor("globex"), "thread-1") == []
    assert wm.export_sessions(auditor("globex"), ["thread-1"]) == {"thread-1": []}
    assert wm.touch(auditor("globex"), "thread-1", "secret", ttl_s=None) is False
    assert wm.delete(auditor("globex"), "thread-1", "secret") is False
    assert wm.clear(auditor("globex"), "thread-1") == 0
    assert wm.erase_sessions(auditor("globex"), ["thread-1"]) == 0
    wm.set(auditor("globex"), "thread-1", "plan", "globex's own")

    assert wm.items(auditor("acme"), "thread-1") == {"plan": "refund", "secret": {"card": "4111"}}
    assert wm.items(auditor("globex"), "thread-1") == {"plan": "globex's own"}
    entry = wm.entry(auditor("acme"), "thread-1", "secret")
    assert entry is not None and entry.expires_at is not None


def test_ids_with_separators_do_not_reach_into_other_sessions(store: Store) -> None:
    wm = store.working
    wm.store.set("a:b", "c", "k", '"tenant a:b, session c"', None)
    wm.set(auditor("a"), "b:c", "k", "tenant a, session b:c")
    wm.set(auditor("a"), "b", "c:k", "tenant a, session b, key c:k")
    wm.set(auditor("a"), "{b}", "e:k", "braces")

    assert [row.key for row in wm.store.entries("a:b", "c")] == ["k"]
    assert wm.items(auditor("a"), "b:c") == {"k": "tenant a, session b:c"}
    assert wm.items(auditor("a"), "b") == {"c:k": "tenant a, session b, key c:k"}
    assert wm.items(auditor("a"), "{b}") == {"e:k": "braces"}
    assert wm.clear(auditor("a"), "b") == 1
    assert [row.key for row in wm.store.entries("a:b", "c")] == ["k"]


def test_export_and_erase_whole_sessions(store: Store) -> None:
    wm = store.working
    wm.set(auditor("acme"), "thread-1", "draft", "hello", ttl_s=LONG_TTL_S)
    wm.set(auditor("acme"), "thread-1", "step", 2)
    wm.set(auditor("acme"), "thread-2", "draft", "other thread")
    wm.set(auditor("acme"), "thread-3", "kept", "not the subject's")

    exported = wm.export_sessions(auditor("acme"), ["thread-1", "thread-2", "thread-9"])

    assert set(exported) == {"thread-1", "thread-2", "thread-9"}
    assert [(e.key, e.value) for e in exported["thread-1"]] == [("draft", "hello"), ("step", 2)]
    assert exported["thread-1"][0].expires_at is not None
    assert exported["thread-1"][1].expires_at is None
    assert [e.model_dump(mode="json")["value"] for e in exported["thread-2"]] == ["other thread"]
    assert exported["thread-9"] == []

    assert wm.erase_sessions(auditor("acme"), ["thread-1", "thread-2", "thread-9"]) == 3

    assert wm.export_sessions(auditor("acme"), ["thread-1", "thread-2"]) == {
        "thread-1": [],
        "thread-2": [],
    }
    assert wm.items(auditor("acme"), "thread-3") == {"kept": "not the subject's"}


def test_erasure_removes_expired_entries_not_yet_purged(store: Store) -> None:
    wm = store.working
    wm.set(auditor("acme"), "thread-1", "old", "expired but stored", ttl_s=SHORT_TTL_S)
    store.pass_time(PAST_SHORT_TTL_S)

    assert wm.erase_sessions(auditor("acme"), ["thread-1"]) == 0

    assert store.stored() == 0


BAD_CALLS: list[tuple[str, Callable[[WorkingMemory], object]]] = [
    ("non-JSON value", lambda wm: wm.set(auditor("acme"), "t", "k", object())),
    ("NaN", lambda wm: wm.set(auditor("acme"), "t", "k", math.nan)),
    ("integer mapping key", lambda wm: wm.set(auditor("acme"), "t", "k", {1: "x"})),
    ("value too large", lambda wm: wm.set(auditor("acme"), "t", "k", "x" * 1_100_000)),
    ("empty key", lambda wm: wm.set(auditor("acme"), "t", "", 1)),
    ("blank key", lambda wm: wm.set(auditor("acme"), "t", "   ", 1)),
    ("key not a string", lambda wm: wm.set(auditor("acme"), "t", 5, 1)),  # type: ignore[arg-type]
    ("NUL in key", lambda wm: wm.set(auditor("acme"), "t", "a\x00b", 1)),
    ("empty session", lambda wm: wm.set(auditor("acme"), "", "k", 1)),
    ("negative TTL", lambda wm: wm.set(auditor("acme"), "t", "k", 1, ttl_s=-5)),
    ("zero TTL", lambda wm: wm.set(auditor("acme"), "t", "k", 1, ttl_s=0)),
    ("infinite TTL", lambda wm: wm.set(auditor("acme"), "t", "k", 1, ttl_s=math.inf)),
    ("TTL as text", lambda wm: wm.set(auditor("acme"), "t", "k", 1, ttl_s="60")),  # type: ignore[arg-type]
    ("TTL as bool", lambda wm: wm.set(auditor("acme"), "t", "k", 1, ttl_s=True)),
    ("TTL over ten years", lambda wm: wm.set(auditor("acme"), "t", "k", 1, ttl_s=400_000_000)),
    ("negative touch", lambda wm: wm.touch(auditor("acme"), "t", "k", ttl_s=-1)),
    ("empty key delete", lambda wm: wm.delete(auditor("acme"), "t", "")),
    ("one string of sessions", lambda wm: wm.erase_sessions(auditor("acme"), "t")),
    ("one string of keys", lambda wm: wm.get_many(auditor("acme"), "t", "k")),
]


@pytest.mark.parametrize("call", [c for _, c in BAD_CALLS], ids=[n for n, _ in BAD_CALLS])
def test_bad_input_is_refused_and_changes_nothing(
    store: Store, call: Callable[[WorkingMemory], object]
) -> None:
    wm = store.working
    wm.set(auditor("acme"), "t", "k", {"kept": True}, ttl_s=LONG_TTL_S)
    before = wm.entries(auditor("acme"), "t")

    with pytest.raises(InvalidInput) as raised:
        call(wm)

    assert raised.value.code == "invalid_input"
    assert str(raised.value)
    after = wm.entries(auditor("acme"), "t")
    if store.name == "redis":  # expires_at is Redis's remaining TTL read again: it moved
        assert [(e.key, e.value) for e in after] == [(e.key, e.value) for e in before]
        assert after[0].expires_at is not None and before[0].expires_at is not None
        assert abs(after[0].expires_at - before[0].expires_at) < timedelta(seconds=60)
    else:
        assert after == before


def test_expiry_is_exact_and_purge_frees_only_expired_rows(sql_store: Store) -> None:
    wm = sql_store.working
    clock = sql_store.app.clock
    assert isinstance(clock, FakeClock)
    wm.set(auditor("acme"), "t", "ten", 10, ttl_s=10)
    wm.set(auditor("globex"), "t", "ten", 10, ttl_s=10)
    wm.set(auditor("acme"), "t", "twenty", 20, ttl_s=20)
    wm.set(auditor("acme"), "t", "forever", 0)

    clock.advance(timedelta(seconds=10) - timedelta(microseconds=1))
    assert wm.keys(auditor("acme"), "t") == ["forever", "ten", "twenty"]
    clock.advance(timedelta(microseconds=1))
    assert wm.keys(auditor("acme"), "t") == ["forever", "twenty"]
    assert wm.keys(auditor("globex"), "t") == []
    assert sql_store.stored() == 4

    assert wm.purge_expired() == 2

    assert sql_store.stored() == 2
    assert wm.items(auditor("acme"), "t") == {"forever": 0, "twenty": 20}
    assert wm.purge_expired(clock.now() + timedelta(seconds=10)) == 1
    assert wm.items(auditor("acme"), "t") == {"forever": 0}


@pytest.fixture
def app_role_storage(postgres_store: Store, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The database opened as a login role that is only a member of ``tether_app``."""
    server: PostgresServer = request.getfixturevalue("postgres_server")
    role = f"{server.prefix}_app_wm{secrets.token_hex(2)}"
    server.execute(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB')
    server.execute(f'GRANT tether_app TO "{role}"')
    dbname = postgres_store.database.url.rsplit("/", 1)[-1]
    storage = open_storage(load_settings(url=server.url(dbname, user=role)))
    try:
        yield storage
    finally:
        storage.close()
        server.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        server.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_row_level_security_hides_another_tenants_entries(
    postgres_store: Store, app_role_storage: Any
) -> None:
    postgres_store.working.set(auditor("acme"), "thread-1", "secret", "acme only")
    now = postgres_store.app.clock.now()

    with app_role_storage.transaction("globex") as txn:
        assert txn.get_working_entry("acme", "thread-1", "secret", now=now) is None
        assert txn.list_working_entries("acme", "thread-1", now=now) == []
        assert txn.delete_working_session("acme", "thread-1", now=now) == 0
    with app_role_storage.transaction("acme", write=False) as txn:
        row = txn.get_working_entry("acme", "thread-1", "secret", now=now)
    assert row is not None and row.value_json == '"acme only"'


def test_redis_leaves_no_keys_behind_once_every_entry_expired(redis_store: Store) -> None:
    store = redis_store
    wm = store.working
    wm.set(auditor("acme"), "t", "a", 1, ttl_s=SHORT_TTL_S)
    wm.set(auditor("acme"), "t", "b", 2, ttl_s=SHORT_TTL_S)
    wm.set(auditor("acme"), "t", "c", 3)
    wm.touch(auditor("acme"), "t", "c", ttl_s=SHORT_TTL_S)
    assert store.stored() == 4  # three entries and the session's index

    store.pass_time(PAST_SHORT_TTL_S)

    assert store.stored() == 0
    assert wm.items(auditor("acme"), "t") == {}


def test_redis_keys_are_namespaced_by_prefix_tenant_and_session(redis_store: Store) -> None:
    store = redis_store
    working = store.working.store
    assert isinstance(working, RedisWorkingStore)
    store.working.set(auditor("acme"), "thread 1", "k/1", "v")

    keys = redis_keys(working.prefix)

    assert keys == [
        f"{working.prefix}wm:{{acme:thread%201}}:e:k%2F1",
        f"{working.prefix}wm:{{acme:thread%201}}:keys",
    ]


def test_an_unreachable_redis_is_a_clear_storage_error(tmp_path: Path) -> None:
    database = migrated_sqlite(tmp_path)
    settings = database.settings(embedder="none", redis_url="redis://127.0.0.1:1/0")
    with Tether.open(settings) as app, pytest.raises(StorageUnavailable) as raised:
        app.working.set(auditor("acme"), "t", "k", 1)

    assert "127.0.0.1:1" in str(raised.value)
    assert "TETHER_REDIS_URL" in str(raised.value)


def test_a_redis_password_never_shows_in_errors(tmp_path: Path) -> None:
    database = migrated_sqlite(tmp_path)
    settings = database.settings(embedder="none", redis_url="redis://:hunter2@127.0.0.1:1/0")
    with Tether.open(settings) as app, pytest.raises(StorageUnavailable) as raised:
        app.working.get(auditor("acme"), "t", "k")

    assert "hunter2" not in str(raised.value)
    assert ":***@127.0.0.1:1" in str(raised.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:6379", "127.0.0.1:6379", "redis://h:port/0"])
def test_a_malformed_redis_url_is_a_config_error(tmp_path: Path, url: str) -> None:
    database = migrated_sqlite(tmp_path)

    with pytest.raises(ConfigError) as raised:
        Tether.open(database.settings(embedder="none", redis_url=url)).close()

    assert "TETHER_REDIS_URL" in str(raised.value)
