from __future__ import annotations

import pytest

from tether.errors import InvalidInput, PermissionDenied
from tether.permissions import authorize
from tether.principals import Principal, Role, parse_roles


def principal(*roles: Role) -> Principal:
    return Principal("acme", "alice", frozenset(roles))


@pytest.mark.parametrize("role", list(Role))
def test_admin_satisfies_every_role(role: Role) -> None:
    admin = principal(Role.ADMIN)

    assert admin.has_role(role)


def test_a_role_satisfies_only_itself() -> None:
    approver = principal(Role.APPROVER)

    assert approver.has_role(Role.APPROVER)
    assert not approver.has_role(Role.OPERATOR)
    assert not approver.has_role(Role.ADMIN)


def test_a_refusal_names_the_roles_that_may_the_principal_and_the_fix() -> None:
    with pytest.raises(PermissionDenied) as caught:
        authorize(principal(Role.VIEWER), "runs.decide")

    message = str(caught.value)
    assert "admin, approver" in message
    assert "'alice'" in message
    assert "'acme'" in message
    assert "tether principals add" in message
    assert caught.value.code == "permission_denied"
    assert caught.value.exit_code == 6


def test_any_one_role_that_holds_the_permission_is_enough() -> None:
    authorize(principal(Role.VIEWER, Role.OPERATOR), "runbook.cancel")


def test_parse_roles_is_forgiving_about_case_and_spaces() -> None:
    assert parse_roles([" Admin", "viewer ", "VIEWER"]) == {Role.ADMIN, Role.VIEWER}


def test_unknown_role_is_rejected_with_the_valid_ones() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_roles(["viewer", "superuser"])

    message = str(caught.value)
    assert "'superuser'" in message
    for role in Role:
        assert role.value in message


@pytest.mark.parametrize(("tenant", "who"), [("Acme", "alice"), ("acme", "alice smith")])
def test_principal_with_an_invalid_name_is_refused(tenant: str, who: str) -> None:
    with pytest.raises(InvalidInput):
        Principal(tenant, who, frozenset())


def test_principals_are_immutable() -> None:
    viewer = principal(Role.VIEWER)

    with pytest.raises(AttributeError):
        viewer.roles = frozenset({Role.ADMIN})  # type: ignore[misc]
