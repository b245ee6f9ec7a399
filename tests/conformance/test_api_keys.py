"""API keys on every backend: made once, stored only as a hash, revoked at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import Conflict, InvalidInput, NotFound, Unauthenticated
from tether.principals import Principal, Role


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def keyed(backend: TestDatabase, clock: FakeClock) -> Iterator[Tether]:
    """Tenants acme (admin ann, operator olga) and globex (admin gil), on a fake clock."""
    with Tether.open(backend.settings(), clock=clock) as app:
        for tenant, admin in (("acme", "ann"), ("globex", "gil")):
            app.tenants.create(tenant, admin=admin)
        app.tenants.grant(admin_of(app, "acme"), "olga", ["operator", "approver"])
        yield app


def admin_of(app: Tether, tenant: str) -> Principal:
    return app.tenants.principal(tenant, {"acme": "ann", "globex": "gil"}[tenant])


def stored_text(backend: TestDatabase) -> str:
    """Every API-key row as the database holds it."""
    with backend.raw() as raw:
        rows = raw.execute("SELECT * FROM api_keys")
    return repr(rows)


def test_a_key_acts_as_its_principal_with_its_roles(keyed: Tether) -> None:
    made = keyed.api_keys.create(admin_of(keyed, "acme"), "olga", ["operator"], name="ops bot")

    assert made.secret.startswith(made.key.prefix + "~")
    assert made.key.prefix == f"tk~acme~{made.key.key_id}"
    assert made.key.roles == [Role.OPERATOR]
    assert keyed.api_keys.authenticate(made.secret) == Principal(
        "acme", "olga", frozenset({Role.OPERATOR})
    )
    whole = keyed.api_keys.create(admin_of(keyed, "acme"), "olga")
    assert keyed.api_keys.authenticate(whole.secret).roles == {Role.OPERATOR, Role.APPROVER}


def test_only_the_hash_is_stored_and_listings_never_show_the_secret(
    keyed: Tether, backend: TestDatabase
) -> None:
    admin = admin_of(keyed, "acme")
    made = keyed.api_keys.create(admin, "olga")
    secret_part = made.secret.rsplit("~", 1)[1]

    assert secret_part not in stored_text(backend)
    listed = keyed.api_keys.all(admin)
    assert [key.key_id for key in listed] == [made.key.key_id]
    assert secret_part not in repr(listed)
    trail = keyed.audit.entries(admin, limit=1000)
    assert [e.action for e in trail if e.target == f"api_key:{made.key.key_id}"] == [
        "api_key.created"
    ]
    assert secret_part not in repr(trail)


def test_a_revoked_key_is_refused_at_once(keyed: Tether) -> None:
    admin = admin_of(keyed, "acme")
    made = keyed.api_keys.create(admin, "olga")
    keyed.api_keys.authenticate(made.secret)

    revoked = keyed.api_keys.revoke(admin, made.key.key_id)

    assert revoked.revoked_by == "ann"
    with pytest.raises(Unauthenticated):
        keyed.api_keys.authenticate(made.secret)
    with pytest.raises(Conflict):
        keyed.api_keys.revoke(admin, made.key.key_id)
    assert keyed.api_keys.all(admin) == []
    assert [key.key_id for key in keyed.api_keys.all(admin, include_revoked=True)] == [
        made.key.key_id
    ]
    actions = [e.action for e in keyed.audit.entries(admin, limit=1000)]
    assert actions[-2:] == ["api_key.created", "api_key.revoked"]


def test_forged_expired_and_foreign_keys_are_refused(keyed: Tether, clock: FakeClock) -> None:
    admin = admin_of(keyed, "acme")
    made = keyed.api_keys.create(admin, "olga", expires_in_days=1)
    head, secret = made.secret.rsplit("~", 1)
    forged = [
        head + "~" + ("0" if secret[0] != "0" else "1") + secret[1:],
        made.secret.replace("tk~acme~", "tk~globex~"),
        made.secret + "0",
        "tk~acme~" + made.key.key_id,
        "Bearer " + made.secret,
        "",
    ]
    for key in forged:
        with pytest.raises(Unauthenticated):
            keyed.api_keys.authenticate(key)

    clock.advance(timedelta(days=1, seconds=1))
    with pytest.raises(Unauthenticated):
        keyed.api_keys.authenticate(made.secret)


def test_a_key_loses_the_roles_its_principal_loses(keyed: Tether) -> None:
    admin = admin_of(keyed, "acme")
    made = keyed.api_keys.create(admin, "olga")
    keyed.tenants.grant(admin, "olga", ["viewer"])

    assert keyed.api_keys.authenticate(made.secret).roles == frozenset()


def test_a_key_is_made_only_within_the_admins_tenant_and_roles(keyed: Tether) -> None:
    acme, globex = admin_of(keyed, "acme"), admin_of(keyed, "globex")
    with pytest.raises(InvalidInput, match="at most its principal's"):
        keyed.api_keys.create(acme, "olga", ["admin"])
    with pytest.raises(NotFound):
        keyed.api_keys.create(globex, "olga")
    made = keyed.api_keys.create(acme, "olga")
    with pytest.raises(NotFound):
        keyed.api_keys.revoke(globex, made.key.key_id)
    assert keyed.api_keys.all(globex) == []
    keyed.api_keys.authenticate(made.secret)
