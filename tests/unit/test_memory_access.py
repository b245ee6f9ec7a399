"""The read-access table: the default rows, a tenant's overrides role by role, and a
principal of several roles."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether.memory.access import (
    ABOVE_CLEARANCE,
    DEFAULT_READ_ACCESS,
    SCOPE_NOT_ALLOWED,
    ReadAccess,
    reader,
)
from tether.memory.models import Scope, Sensitivity
from tether.memory.policy import PolicyConfig
from tether.principals import Principal, Role


def who(*roles: Role) -> Principal:
    return Principal("acme", "p-1", frozenset(roles))


@pytest.mark.parametrize(
    ("role", "scope", "sensitivity", "reason"),
    [
        (Role.VIEWER, Scope.USER, Sensitivity.INTERNAL, None),
        (Role.VIEWER, Scope.CASE, Sensitivity.PUBLIC, SCOPE_NOT_ALLOWED),
        (Role.VIEWER, Scope.USER, Sensitivity.CONFIDENTIAL, ABOVE_CLEARANCE),
        (Role.AGENT, Scope.CASE, Sensitivity.CONFIDENTIAL, None),
        (Role.AGENT, Scope.USER, Sensitivity.RESTRICTED, ABOVE_CLEARANCE),
        (Role.APPROVER, Scope.TENANT, Sensitivity.RESTRICTED, ABOVE_CLEARANCE),
        (Role.OPERATOR, Scope.GLOBAL, Sensitivity.CONFIDENTIAL, None),
        (Role.ADMIN, Scope.CASE, Sensitivity.RESTRICTED, None),
    ],
)
def test_the_default_table(
    role: Role, scope: Scope, sensitivity: Sensitivity, reason: str | None
) -> None:
    assert reader(who(role), {}).denies(scope, sensitivity) == reason


def test_an_override_replaces_only_its_roles_row() -> None:
    overrides = {Role.VIEWER: ReadAccess(scopes=[Scope.CASE], clearance=Sensitivity.PUBLIC)}

    viewer = reader(who(Role.VIEWER), overrides)
    agent = reader(who(Role.AGENT), overrides)

    assert viewer.denies(Scope.CASE, Sensitivity.PUBLIC) is None
    assert viewer.denies(Scope.USER, Sensitivity.PUBLIC) == SCOPE_NOT_ALLOWED
    assert viewer.denies(Scope.CASE, Sensitivity.INTERNAL) == ABOVE_CLEARANCE
    assert agent == reader(who(Role.AGENT), {})


def test_several_roles_read_the_union_of_scopes_up_to_the_highest_clearance() -> None:
    overrides = {Role.OPERATOR: ReadAccess(scopes=[Scope.CASE], clearance=Sensitivity.PUBLIC)}

    both = reader(who(Role.VIEWER, Role.OPERATOR), overrides)

    assert both.scopes == set(DEFAULT_READ_ACCESS[Role.VIEWER].scopes) | {Scope.CASE}
    assert both.clearance is Sensitivity.INTERNAL
    assert both.roles == ("operator", "viewer")


def test_the_table_is_part_of_the_policy_configuration() -> None:
    config = PolicyConfig.model_validate(
        {"read_access": {"viewer": {"scopes": ["case"], "clearance": "public"}}}
    )

    assert PolicyConfig.model_validate_json(config.model_dump_json()) == config
    assert config.read_access[Role.VIEWER].scopes == [Scope.CASE]
    assert PolicyConfig().read_access == {}
    with pytest.raises(ValidationError):
        PolicyConfig.model_validate(
            {"read_access": {"superuser": {"scopes": [], "clearance": "public"}}}
        )
    with pytest.raises(ValidationError):
        PolicyConfig.model_validate(
            {"read_access": {"viewer": {"scopes": ["case"], "clearance": "secret"}}}
        )
