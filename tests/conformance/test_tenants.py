"""Tenants and principals, on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.support import TestDatabase, auditor
from tether import FakeClock, Tether
from tether.errors import Conflict, InvalidInput, NotFound, PermissionDenied, UnknownTenant
from tether.principals import SYSTEM_ACTOR, Principal, Role

START = datetime(2030, 3, 1, 9, 0, tzinfo=UTC)


def snapshot(app: Tether, tenant_id: str) -> tuple[object, ...]:
    """What a user can see of a tenant: the tenant, its principals and its trail."""
    return (
        app.tenants.get(tenant_id),
        app.tenants.principals(auditor(tenant_id)),
        app.audit.entries(auditor(tenant_id), limit=1000),
    )


def test_create_get_and_list_tenants(app: Tether) -> None:
    created = app.tenants.create("acme", name="Acme Insurance", admin="alice")
    app.tenants.create("globex")

    fetched = app.tenants.get("acme")
    assert fetched == created
    assert fetched.name == "Acme Insurance"
    assert fetched.created_by == SYSTEM_ACTOR
    assert fetched.created_at.tzinfo is not None
    assert [tenant.tenant_id for tenant in app.tenants.all()] == ["acme", "globex"]
    assert app.tenants.get("globex").name == "globex"


def test_tenant_creation_is_audited_with_its_first_admin(app: Tether) -> None:
    app.tenants.create("acme", admin="alice")

    entries = app.audit.entries(auditor("acme"))
    assert [(e.seq, e.actor_id, e.action, e.target) for e in entries] == [
        (1, SYSTEM_ACTOR, "tenant.created", "tenant:acme"),
        (2, SYSTEM_ACTOR, "principal.created", "principal:alice"),
    ]
    assert app.tenants.get("acme").audit_entries == 2
    assert app.tenants.principal("acme", "alice").roles == {Role.ADMIN}


def test_tenants_survive_reopening(backend: TestDatabase) -> None:
    with backend.open() as first:
        first.tenants.create("acme", admin="alice")

    with backend.open() as second:
        assert second.tenants.get("acme").tenant_id == "acme"
        assert second.tenants.principal("acme", "alice").has_role(Role.ADMIN)


def test_duplicate_tenant_is_a_conflict_and_changes_nothing(app: Tether) -> None:
    app.tenants.create("acme", name="Acme", admin="alice")
    before = snapshot(app, "acme")

    with pytest.raises(Conflict, match="'acme' already exists"):
        app.tenants.create("acme", name="Acme Two", admin="mallory")

    assert snapshot(app, "acme") == before
    assert [tenant.tenant_id for tenant in app.tenants.all()] == ["acme"]
    with pytest.raises(NotFound):
        app.tenants.principal("acme", "mallory")


@pytest.mark.parametrize(("tenant_id", "admin"), [("Acme", None), ("acme", "Alice Smith")])
def test_invalid_names_are_refused_and_nothing_is_created(
    app: Tether, tenant_id: str, admin: str | None
) -> None:
    with pytest.raises(InvalidInput):
        app.tenants.create(tenant_id, admin=admin)

    assert app.tenants.all() == []


def test_admin_grants_roles_and_the_grant_records_who(app: Tether) -> None:
    app.tenants.create("acme", admin="alice")
    alice = app.tenants.principal("acme", "alice")

    record = app.tenants.grant(alice, "bob", ["approver", "viewer"])

    assert record.roles == [Role.APPROVER, Role.VIEWER]
    assert record.created_by == "alice"
    assert record.updated_by == "alice"
    assert app.tenants.principal("acme", "bob").roles == {Role.APPROVER, Role.VIEWER}
    last = app.audit.entries(auditor("acme"))[-1]
    assert (last.actor_id, last.action) == ("alice", "principal.created")
    assert last.target == "principal:bob"
    assert last.details == {"roles": ["approver", "viewer"]}


def test_regrant_replaces_roles_and_keeps_who_created_it(backend: TestDatabase) -> None:
    clock = FakeClock(START)
    with Tether.open(backend.settings(), clock=clock) as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.tenants.grant(alice, "carol", ["admin"])
        carol = app.tenants.principal("acme", "carol")
        app.tenants.grant(alice, "bob", ["viewer"])
        clock.advance(timedelta(hours=1))

        record = app.tenants.grant(carol, "bob", ["operator"])

        assert record.roles == [Role.OPERATOR]
        assert (record.created_by, record.updated_by) == ("alice", "carol")
        assert record.created_at == START
        assert record.updated_at == START + timedelta(hours=1)
        last = app.audit.entries(auditor("acme"))[-1]
        assert (last.actor_id, last.action) == ("carol", "principal.updated")
        assert last.at == START + timedelta(hours=1)


def test_every_write_names_its_actor_in_the_trail(app: Tether) -> None:
    app.tenants.create("acme", admin="alice")
    alice = app.tenants.principal("acme", "alice")
    app.tenants.grant(alice, "carol", ["admin"])
    app.tenants.grant(app.tenants.principal("acme", "carol"), "dave", ["agent"])

    actors = [(entry.actor_id, entry.target) for entry in app.audit.entries(auditor("acme"))]
    assert actors == [
        (SYSTEM_ACTOR, "tenant:acme"),
        (SYSTEM_ACTOR, "principal:alice"),
        ("alice", "principal:carol"),
        ("carol", "principal:dave"),
    ]
    by_id = {record.principal_id: record for record in app.tenants.principals(auditor("acme"))}
    assert by_id["alice"].created_by == SYSTEM_ACTOR
    assert by_id["carol"].created_by == "alice"
    assert by_id["dave"].created_by == "carol"


@pytest.mark.parametrize("roles", [["approver"], ["operator", "viewer"], ["agent"]])
def test_grant_by_a_non_admin_is_denied_and_writes_nothing(app: Tether, roles: list[str]) -> None:
    app.tenants.create("acme", admin="alice")
    app.tenants.grant(app.tenants.principal("acme", "alice"), "bob", roles)
    bob = app.tenants.principal("acme", "bob")
    before = snapshot(app, "acme")

    with pytest.raises(PermissionDenied, match=r"principals\.manage"):
        app.tenants.grant(bob, "eve", ["admin"])
    with pytest.raises(PermissionDenied):
        app.tenants.grant(bob, "bob", ["admin"])

    assert snapshot(app, "acme") == before
    with pytest.raises(NotFound, match="'eve' does not exist"):
        app.tenants.principal("acme", "eve")


@pytest.mark.parametrize("roles", [["superuser"], []])
def test_grant_of_an_unknown_or_no_role_is_refused_and_writes_nothing(
    app: Tether, roles: list[str]
) -> None:
    app.tenants.create("acme", admin="alice")
    before = snapshot(app, "acme")

    with pytest.raises(InvalidInput):
        app.tenants.grant(app.tenants.principal("acme", "alice"), "bob", roles)

    assert snapshot(app, "acme") == before


def test_admin_of_one_tenant_cannot_act_in_another(app: Tether) -> None:
    app.tenants.create("acme", admin="alice")
    app.tenants.create("globex", admin="gina")
    before = snapshot(app, "globex")

    with pytest.raises(NotFound):
        app.tenants.principal("globex", "alice")
    gina = app.tenants.principal("globex", "gina")
    app.tenants.grant(gina, "hank", ["viewer"])

    assert [p.principal_id for p in app.tenants.principals(auditor("acme"))] == ["alice"]
    assert len(app.audit.entries(auditor("globex"))) == len(before[2]) + 1
    assert app.audit.verify("acme").ok
    assert app.audit.verify("globex").ok


@pytest.mark.parametrize(
    "call",
    [
        lambda app: app.tenants.get("nowhere"),
        lambda app: app.tenants.principal("nowhere", "alice"),
        lambda app: app.tenants.principals(auditor("nowhere")),
        lambda app: app.audit.verify("nowhere"),
    ],
    ids=["get", "principal", "principals", "verify"],
)
def test_unknown_tenant_is_reported_as_such(app: Tether, call: object) -> None:
    app.tenants.create("acme")

    with pytest.raises(UnknownTenant, match="'nowhere'") as caught:
        call(app)  # type: ignore[operator]

    assert caught.value.exit_code == 4
    assert [tenant.tenant_id for tenant in app.tenants.all()] == ["acme"]


def test_unknown_tenant_error_says_how_to_create_it(app: Tether) -> None:
    with pytest.raises(UnknownTenant, match="tether tenants create nowhere"):
        app.tenants.get("nowhere")


def test_grant_in_an_unknown_tenant_is_unknown_tenant_and_writes_nothing(app: Tether) -> None:
    ghost_admin = Principal("nowhere", "root", frozenset({Role.ADMIN}))

    with pytest.raises(UnknownTenant, match="'nowhere'"):
        app.tenants.grant(ghost_admin, "bob", ["viewer"])

    assert app.tenants.all() == []


@pytest.mark.parametrize("reserved", [SYSTEM_ACTOR, "tether"])
def test_reserved_principal_ids_are_refused_and_nothing_changes(app: Tether, reserved: str) -> None:
    """A principal named like Tether's own actor would make its entries in the trail read
    as maintenance."""
    app.tenants.create("acme", admin="alice")
    before = snapshot(app, "acme")
    alice = app.tenants.principal("acme", "alice")
    with pytest.raises(InvalidInput, match="reserved"):
        app.tenants.grant(alice, reserved, ["admin"])
    with pytest.raises(InvalidInput, match="reserved"):
        app.tenants.create("globex", admin=reserved)
    assert snapshot(app, "acme") == before
    assert [tenant.tenant_id for tenant in app.tenants.all()] == ["acme"]
