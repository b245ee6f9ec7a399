"""Who acts: a principal is (tenant, id, roles), and every write records it."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from tether.errors import InvalidInput
from tether.ids import check_name

RESERVED_PREFIX = "_"
"""Ids of tenants Tether keeps for itself start with this; no created tenant's id can."""

GLOBAL_TENANT = RESERVED_PREFIX + "global"
"""The reserved tenant that holds global memory, and the platform's own tenant: its
principals are the platform administrators (see :mod:`tether.permissions`). Every tenant
reads global memory; only platform administrators write it. The memory migration 0002
creates it."""


class Role(enum.StrEnum):
    ADMIN = "admin"
    OPERATOR = "operator"
    APPROVER = "approver"
    AGENT = "agent"
    VIEWER = "viewer"


def parse_roles(values: Iterable[str]) -> frozenset[Role]:
    """Parse role names, refusing unknown ones with the list of valid roles."""
    roles = set()
    for value in values:
        try:
            roles.add(Role(value.strip().lower()))
        except ValueError:
            valid = ", ".join(role.value for role in Role)
            raise InvalidInput(f"unknown role {value!r}: valid roles are {valid}") from None
    return frozenset(roles)


@dataclass(frozen=True)
class Principal:
    """An actor inside one tenant; what its roles allow is :mod:`tether.permissions`."""

    tenant_id: str
    principal_id: str
    roles: frozenset[Role]

    def __post_init__(self) -> None:
        if self.tenant_id != GLOBAL_TENANT:
            check_name(self.tenant_id, what="tenant")
        check_name(self.principal_id, what="principal")

    def has_role(self, role: Role) -> bool:
        return Role.ADMIN in self.roles or role in self.roles


SYSTEM_ACTOR = "system"
"""Actor id recorded for writes made by maintenance (migrations, tenant creation)."""

RESERVED_PRINCIPALS = frozenset({SYSTEM_ACTOR, "tether"})
"""Principal ids no one may create: in the audit trail they would read as Tether's own
maintenance."""


def check_principal_id(value: str) -> str:
    """Validate a principal id a caller chose, and refuse a reserved one."""
    check_name(value, what="principal")
    if value in RESERVED_PRINCIPALS:
        raise InvalidInput(
            f"principal {value!r} is reserved (the trail uses it for Tether's own actions); "
            "choose another id"
        )
    return value
