"""Row-level security on PostgreSQL: a tenant's transaction sees and writes only its rows.

The tests connect as a LOGIN role that is neither superuser nor table owner, lacks
BYPASSRLS and is only a member of ``tether_app``: the role an application would use. Even
hand-written SQL on that connection cannot reach another tenant's rows: not by setting
the tenant itself (``set_config``), not by ``SET ROLE`` or ``RESET``, not by standing in a
temporary table of its own for the key table; and it reads no key material.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support import PostgresServer, auditor, record
from tether import Tether
from tether.config import load_settings
from tether.errors import ConfigError, PermissionDenied, UnknownTenant
from tether.keys import hmac_pads
from tether.storage.postgres import backend as postgres_backend
from tether.storage.postgres.backend import sign_tenant

pytestmark = pytest.mark.postgres

TABLES = ("tenants", "principals", "audit_log")


@dataclass(frozen=True)
class TwoTenants:
    dbname: str
    admin_url: str
    role: str
    role_url: str

    def settings(self, **overrides: object) -> Any:
        return load_settings(url=self.role_url, **overrides)

    def superuser_rows(self, table: str, tenant_id: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.admin_url) as conn:
            return conn.execute(
                f"SELECT * FROM {table} WHERE tenant_id = %s ORDER BY 2", (tenant_id,)
            ).fetchall()


@pytest.fixture(scope="session")
def application_role(postgres_server: PostgresServer) -> Iterator[str]:
    """A plain LOGIN role in tether_app: not superuser, not owner, no BYPASSRLS."""
    role = f"{postgres_server.prefix}_app_{secrets.token_hex(2)}"
    postgres_server.execute(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB')
    try:
        yield role
    finally:
        postgres_server.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        postgres_server.execute(f'DROP ROLE IF EXISTS "{role}"')


@pytest.fixture(scope="session")
def two_tenants_template(
    postgres_server: PostgresServer, postgres_template: str, test_key_file: Path
) -> str:
    """Tenants a and b, each with principals and an audit trail, written as the superuser."""
    dbname = postgres_server.create_database(template=postgres_template)
    with Tether.open(load_settings(url=postgres_server.url(dbname), key_file=test_key_file)) as app:
        app.tenants.create("a", admin="alice")
        app.tenants.create("b", admin="bob")
        app.tenants.grant(app.tenants.principal("b", "bob"), "bert", ["viewer"])
        record(app, "a", 2, actor="alice")
        record(app, "b", 3, actor="bob")
    postgres_server.disconnect_all(dbname)
    return dbname


@pytest.fixture
def two_tenants(
    postgres_server: PostgresServer, two_tenants_template: str, application_role: str
) -> Iterator[TwoTenants]:
    dbname = postgres_server.create_database(template=two_tenants_template)
    postgres_server.execute(f'GRANT tether_app TO "{application_role}"')
    admin_url = postgres_server.url(dbname)
    try:
        yield TwoTenants(
            dbname, admin_url, application_role, postgres_server.url(dbname, user=application_role)
        )
    finally:
        postgres_server.drop_database(dbname)


def test_the_application_role_is_plain(two_tenants: TwoTenants) -> None:
    with psycopg.connect(two_tenants.role_url) as conn:
        flags = conn.execute(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class WHERE relname = ANY(%s)",
            (list(TABLES),),
        ).fetchall()

    assert flags == (False, False)
    assert (two_tenants.role,) not in owners


def test_application_role_can_open_tether(two_tenants: TwoTenants) -> None:
    # An application connects as a role in tether_app only; opening must not need the
    # cross-tenant tether_system role.
    with Tether.open(url=two_tenants.role_url) as app:
        assert app.tenants.get("a").tenant_id == "a"


def test_tether_api_in_a_tenant_transaction_sees_only_that_tenant(
    two_tenants: TwoTenants,
) -> None:
    with Tether.open(two_tenants.settings()) as app, app.storage.transaction("a") as txn:
        assert txn.get_tenant("a") is not None
        assert txn.get_tenant("b") is None
        assert [row.tenant_id for row in txn.list_tenants()] == ["a"]
        assert txn.list_principals("b") == []
        assert txn.get_principal("b", "bob") is None
        assert txn.list_audit_entries("b") == []
        assert [row.seq for row in txn.list_audit_entries("a")] == [1, 2, 3, 4]
        with pytest.raises(UnknownTenant):
            txn.lock_audit_head("b")


def test_public_api_still_works_for_each_tenant_as_the_application_role(
    two_tenants: TwoTenants,
) -> None:
    with Tether.open(two_tenants.settings()) as app:
        assert [p.principal_id for p in app.tenants.principals(auditor("b"))] == ["bert", "bob"]
        assert app.audit.verify("a").ok
        assert app.audit.verify("b").entries_checked == 6
        app.tenants.grant(app.tenants.principal("a", "alice"), "amy", ["viewer"])

    assert len(two_tenants.superuser_rows("principals", "a")) == 2
    assert len(two_tenants.superuser_rows("principals", "b")) == 2


@pytest.mark.parametrize("table", TABLES)
def test_hand_written_sql_in_a_tenant_transaction_sees_only_that_tenant(
    two_tenants: TwoTenants, table: str
) -> None:
    with Tether.open(two_tenants.settings()) as app, app.storage.transaction("a") as txn:
        rows = txn.connection.execute(f"SELECT * FROM {table}").fetchall()
        asked_for_b = txn.connection.execute(
            f"SELECT count(*) AS n FROM {table} WHERE tenant_id = 'b'"
        ).fetchone()

    assert rows
    assert {row["tenant_id"] for row in rows} == {"a"}
    assert asked_for_b == {"n": 0}


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO principals (tenant_id, principal_id, roles, created_at, created_by, "
        "updated_at, updated_by) VALUES ('b', 'mallory', '[\"admin\"]', now(), 'alice', "
        "now(), 'alice')",
        "INSERT INTO audit_log (tenant_id, seq, entry_id, at, actor_id, action, target, "
        "details, subjects, prev_hash, entry_hash) VALUES ('b', 7, gen_random_uuid(), now(), "
        "'alice', 'case.closed', 'case:1', '{}', '[]', '', '')",
        "INSERT INTO tenants (tenant_id, name, created_at, created_by) "
        "VALUES ('c', 'c', now(), 'alice')",
        "UPDATE principals SET tenant_id = 'b' WHERE tenant_id = 'a'",
        "UPDATE tenants SET audit_seq = 0 WHERE tenant_id = 'b'",
        "ALTER TABLE audit_log DISABLE ROW LEVEL SECURITY",
    ],
    ids=[
        "insert-principal-b",
        "insert-audit-b",
        "insert-tenant",
        "move-principal-to-b",
        "update-tenant-b",
        "disable-rls",
    ],
)
def test_writes_outside_the_tenant_are_refused_and_change_nothing(
    two_tenants: TwoTenants, statement: str
) -> None:
    before = {
        (table, tenant): two_tenants.superuser_rows(table, tenant)
        for table in TABLES
        for tenant in ("a", "b")
    }

    with Tether.open(two_tenants.settings()) as app:
        try:
            with app.storage.transaction("a") as txn:
                changed = txn.connection.execute(statement).rowcount
        except PermissionDenied:
            changed = 0

    assert changed == 0
    after = {key: two_tenants.superuser_rows(*key) for key in before}
    assert after == before


def test_insert_for_another_tenant_is_permission_denied(two_tenants: TwoTenants) -> None:
    with (
        Tether.open(two_tenants.settings()) as app,
        pytest.raises(PermissionDenied, match="row-level security"),
        app.storage.transaction("a") as txn,
    ):
        txn.connection.execute(
            "INSERT INTO principals (tenant_id, principal_id, roles, created_at, created_by, "
            "updated_at, updated_by) VALUES ('b', 'mallory', '[]', now(), 'x', now(), 'x')"
        )

    assert [row[1] for row in two_tenants.superuser_rows("principals", "b")] == ["bert", "bob"]


def test_pooled_connection_reused_for_another_tenant_sees_only_that_tenant(
    two_tenants: TwoTenants,
) -> None:
    settings = two_tenants.settings(pg_pool_min_size=1, pg_pool_max_size=1)
    with Tether.open(settings) as app:
        with app.storage.transaction("a") as txn:
            pid_a = txn.connection.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
            seen_a = txn.connection.execute("SELECT DISTINCT tenant_id FROM audit_log").fetchall()
        with app.storage.transaction("b") as txn:
            pid_b = txn.connection.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
            seen_b = txn.connection.execute("SELECT DISTINCT tenant_id FROM audit_log").fetchall()
            principals_b = txn.connection.execute("SELECT principal_id FROM principals").fetchall()
        with app.storage.transaction("nobody") as txn:
            pid_none = txn.connection.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
            seen_none = txn.connection.execute("SELECT tenant_id FROM audit_log").fetchall()

    assert pid_a == pid_b == pid_none
    assert seen_a == [{"tenant_id": "a"}]
    assert seen_b == [{"tenant_id": "b"}]
    assert sorted(row["principal_id"] for row in principals_b) == ["bert", "bob"]
    assert seen_none == []


@pytest.mark.parametrize("table", TABLES)
def test_raw_connection_without_a_tenant_sees_no_rows(two_tenants: TwoTenants, table: str) -> None:
    with psycopg.connect(two_tenants.role_url) as conn:
        as_login = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        conn.execute("SET ROLE tether_app")
        as_app = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        conn.execute("SELECT set_config('tether.tenant_id', '', false)")
        with_empty_tenant = conn.execute(f"SELECT count(*) FROM {table}").fetchone()

    assert as_login == (0,)
    assert as_app == (0,)
    assert with_empty_tenant == (0,)
    assert two_tenants.superuser_rows(table, "a")


def test_application_role_cannot_switch_to_the_system_role(two_tenants: TwoTenants) -> None:
    with (
        psycopg.connect(two_tenants.role_url) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("SET ROLE tether_system")


def test_tether_on_a_superuser_url_is_still_confined_by_tenant(two_tenants: TwoTenants) -> None:
    with Tether.open(url=two_tenants.admin_url) as app, app.storage.transaction("a") as txn:
        rows = txn.connection.execute("SELECT DISTINCT tenant_id FROM audit_log").fetchall()

    assert rows == [{"tenant_id": "a"}]


def tenant_tables(two_tenants: TwoTenants) -> list[str]:
    with psycopg.connect(two_tenants.admin_url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_policies WHERE policyname = 'tenant_isolation' "
            "ORDER BY tablename"
        ).fetchall()
    return [str(row[0]) for row in rows]


ATTACKER_KEY = b"a key the attacker made up itself"
FORGE_ATTACKS = {
    "set-tenant": ["SELECT set_config('tether.tenant_id', 'b', true)"],
    "set-tenant-for-the-session": ["SELECT set_config('tether.tenant_id', 'b', false)"],
    "set-role-then-tenant": [
        "SET ROLE tether_app",
        "SELECT set_config('tether.tenant_id', 'b', true)",
    ],
    "reset-role-then-tenant": [
        "RESET ROLE",
        "SELECT set_config('tether.tenant_id', 'b', true)",
    ],
    "reset-all-then-tenant": ["RESET ALL", "SET tether.tenant_id = 'b'"],
    "own-key-in-a-temporary-table": [
        "CREATE TEMP TABLE tether_secrets (purpose text, inner_pad bytea, outer_pad bytea)",
        "INSERT INTO pg_temp.tether_secrets VALUES ('pg-tenant-context', %(inner)s, %(outer)s)",
        "SELECT tether_enter('b', %(nonce)s, %(sig)s)",
    ],
    "own-nonce-sequence-after-discard-temp": [
        "DISCARD TEMP",
        "CREATE TEMP SEQUENCE tether_nonces AS bigint MINVALUE 0 START 0",
        "SELECT setval('pg_temp.tether_nonces', 0)",
    ],
    "set-tenant-and-a-proof": [
        "SELECT set_config('tether.tenant_id', 'b', true), "
        "set_config('tether.tenant_proof', current_setting('tether.tenant_proof'), true)",
    ],
}


@pytest.mark.parametrize("attack", sorted(FORGE_ATTACKS))
def test_sql_in_a_tenant_transaction_cannot_forge_another_tenant(
    two_tenants: TwoTenants, attack: str
) -> None:
    tables = tenant_tables(two_tenants)
    with Tether.open(two_tenants.settings()) as app, app.storage.transaction("a") as txn:
        conn = txn.connection
        pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        inner, outer = hmac_pads(ATTACKER_KEY)
        nonce, sig = sign_tenant(ATTACKER_KEY, "b", pid)
        params = {"inner": inner, "outer": outer, "nonce": nonce, "sig": sig}
        for statement in FORGE_ATTACKS[attack]:
            conn.execute(statement, params if "%(" in statement else None)
        seen = {
            table: conn.execute(f"SELECT DISTINCT tenant_id FROM {table}").fetchall()
            for table in tables
        }
        verified = conn.execute("SELECT tether_tenant() AS t").fetchone()["t"]

    assert {"tenants", "principals", "audit_log", "runs", "memories"} <= set(tables)
    assert all(row["tenant_id"] in {"a", "_global"} for rows in seen.values() for row in rows)
    assert verified in {None, "a"}
    assert two_tenants.superuser_rows("principals", "b")


@pytest.mark.parametrize("attack", ["set-tenant", "reset-role-then-tenant"])
def test_sql_that_forges_the_tenant_cannot_write_another_tenants_principals(
    two_tenants: TwoTenants, attack: str
) -> None:
    before = two_tenants.superuser_rows("principals", "b")
    with (
        Tether.open(two_tenants.settings()) as app,
        pytest.raises(PermissionDenied),
        app.storage.transaction("a") as txn,
    ):
        for statement in FORGE_ATTACKS[attack]:
            txn.connection.execute(statement)
        txn.connection.execute(
            "INSERT INTO principals (tenant_id, principal_id, roles, created_at, "
            "created_by, updated_at, updated_by) VALUES ('b', 'mallory', '[\"admin\"]', "
            "now(), 'x', now(), 'x')"
        )

    assert two_tenants.superuser_rows("principals", "b") == before


@pytest.mark.parametrize("table", ["tether_secrets", "tether_meta"])
@pytest.mark.parametrize("reset", [False, True], ids=["as-tether_app", "after-reset-role"])
def test_the_application_role_reads_no_key_material(
    two_tenants: TwoTenants, table: str, reset: bool
) -> None:
    with (
        Tether.open(two_tenants.settings()) as app,
        pytest.raises(PermissionDenied),
        app.storage.transaction("a") as txn,
    ):
        if reset:
            txn.connection.execute("RESET ROLE")
        txn.connection.execute(f"SELECT * FROM {table}")

    with psycopg.connect(two_tenants.admin_url) as conn:
        stored = conn.execute("SELECT count(*) FROM tether_secrets").fetchone()
        meta_keys = conn.execute(
            "SELECT count(*) FROM tether_meta WHERE key = 'subject_hash_key'"
        ).fetchone()
    assert stored == (1,)
    assert meta_keys == (0,)


def signatures_made(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every (tenant, nonce, signature) the backend signs from now on, as an attacker who
    reads statement texts (``pg_stat_activity``) could learn them."""
    made: list[dict[str, Any]] = []

    def recording(key: bytes, tenant_id: str, backend_pid: int) -> tuple[int, str]:
        nonce, sig = sign_tenant(key, tenant_id, backend_pid)
        made.append({"tenant": tenant_id, "nonce": nonce, "sig": sig, "pid": backend_pid})
        return nonce, sig

    monkeypatch.setattr(postgres_backend, "sign_tenant", recording)
    return made


def test_a_signature_for_another_backend_is_refused(
    two_tenants: TwoTenants, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = signatures_made(monkeypatch)
    settings = two_tenants.settings(pg_pool_min_size=2, pg_pool_max_size=2)
    with Tether.open(settings) as app, app.storage.transaction("b"):
        stolen = made[-1]
        with app.storage.transaction("a") as txn_a:
            entered = txn_a.connection.execute(
                "SELECT tether_enter(%(tenant)s, %(nonce)s, %(sig)s) AS ok", stolen
            ).fetchone()
            seen = txn_a.connection.execute("SELECT tenant_id FROM principals").fetchall()

    assert stolen["tenant"] == "b"
    assert entered == {"ok": False}
    assert {row["tenant_id"] for row in seen} == {"a"}


@pytest.mark.parametrize("replayed_in", ["another-tenant-later", "its-own-tenant-later"])
def test_a_signature_replayed_on_its_own_backend_is_refused(
    two_tenants: TwoTenants, monkeypatch: pytest.MonkeyPatch, replayed_in: str
) -> None:
    """A captured signature is good for the one transaction it was made for: replayed on
    the same backend in any later transaction (or again in a later one of its own), it
    enters no tenant."""
    made = signatures_made(monkeypatch)
    settings = two_tenants.settings(pg_pool_min_size=1, pg_pool_max_size=1)
    with Tether.open(settings) as app:
        with app.storage.transaction("b", write=False) as txn_b:
            txn_b.connection.execute("SELECT 1")
        stolen = made[-1]
        with app.storage.transaction("a") as txn_a:
            conn = txn_a.connection
            assert conn.info.backend_pid == stolen["pid"]
            entered = conn.execute(
                "SELECT tether_enter(%(tenant)s, %(nonce)s, %(sig)s) AS ok", stolen
            ).fetchone()
            verified = conn.execute("SELECT tether_tenant() AS t").fetchone()
            seen = conn.execute("SELECT DISTINCT tenant_id FROM principals").fetchall()
        if replayed_in == "its-own-tenant-later":
            own = made[-1]
            with app.storage.transaction("a") as txn_again:
                again = txn_again.connection.execute(
                    "SELECT tether_enter(%(tenant)s, %(nonce)s, %(sig)s) AS ok", own
                ).fetchone()
                assert again == {"ok": False}

    assert entered == {"ok": False}
    assert verified == {"t": "a"}
    assert {row["tenant_id"] for row in seen} == {"a"}
    assert two_tenants.superuser_rows("principals", "b")


def test_opening_with_another_key_than_the_database_was_migrated_with_is_refused(
    two_tenants: TwoTenants,
) -> None:
    with pytest.raises(ConfigError, match="not the one"):
        Tether.open(two_tenants.settings(secret_key="a different master key, 32 bytes"))


def test_postgres_without_a_key_is_refused_with_a_clear_error(
    two_tenants: TwoTenants, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TETHER_KEY_FILE")

    with pytest.raises(ConfigError, match="TETHER_SECRET_KEY"):
        Tether.open(url=two_tenants.role_url)
