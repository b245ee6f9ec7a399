"""Who reads which memories: a role → scopes and clearance table per tenant.

Holding ``memory.read`` lets a principal read memory at all; this table says which of its
tenant's memories: those in a scope its roles may read, of a sensitivity up to its
clearance. :data:`DEFAULT_READ_ACCESS` is the table of every tenant; a tenant overrides
it role by role in its write policy's configuration
(:attr:`tether.memory.policy.PolicyConfig.read_access`). A principal with several roles
reads every scope any of them reads, up to the highest of their clearances.

Every path on which a memory's text leaves the store for a principal asks this table:
recall (what it leaves out is counted by reason, never returned), ``get``, ``history``,
``pending``, ``in_scopes``, and the changes that return the record (approve, reject,
correct, confirm, contradict, forget). A data subject's export
(``app.subjects.export``) is the person's access request and returns everything held
about them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import PermissionDenied
from tether.memory.models import MemoryRecord, Scope, Sensitivity
from tether.principals import Principal, Role

LEVELS = (
    Sensitivity.PUBLIC,
    Sensitivity.INTERNAL,
    Sensitivity.CONFIDENTIAL,
    Sensitivity.RESTRICTED,
)
"""Sensitivities from lowest to highest: a clearance admits its own level and those below."""

SCOPE_NOT_ALLOWED = "scope not allowed"
ABOVE_CLEARANCE = "sensitivity above clearance"
"""The reasons recall counts access-filtered memories under (``filtered_out``)."""


class ReadAccess(BaseModel):
    """What one role reads: the scopes, and the highest sensitivity (its clearance)."""

    model_config = ConfigDict(frozen=True)

    scopes: list[Scope] = Field(description="the scopes the role reads")
    clearance: Sensitivity = Field(description="the highest sensitivity the role reads")


_EVERY_SCOPE = list(Scope)

DEFAULT_READ_ACCESS: Mapping[Role, ReadAccess] = MappingProxyType(
    {
        Role.VIEWER: ReadAccess(
            scopes=[s for s in Scope if s is not Scope.CASE], clearance=Sensitivity.INTERNAL
        ),
        Role.AGENT: ReadAccess(scopes=_EVERY_SCOPE, clearance=Sensitivity.CONFIDENTIAL),
        Role.APPROVER: ReadAccess(scopes=_EVERY_SCOPE, clearance=Sensitivity.CONFIDENTIAL),
        Role.OPERATOR: ReadAccess(scopes=_EVERY_SCOPE, clearance=Sensitivity.CONFIDENTIAL),
        Role.ADMIN: ReadAccess(scopes=_EVERY_SCOPE, clearance=Sensitivity.RESTRICTED),
    }
)
"""Every tenant's table unless it overrides a role: a viewer reads no case memory and
nothing above ``internal``; agents, approvers and operators read every scope up to
``confidential``; only an admin reads ``restricted`` memories."""


@dataclass(frozen=True)
class Reader:
    """What one principal may read, from its roles' rows of its tenant's table."""

    principal_id: str
    roles: tuple[str, ...]
    scopes: frozenset[Scope]
    clearance: Sensitivity
    levels: frozenset[Sensitivity]

    def denies(self, scope: Scope, sensitivity: Sensitivity) -> str | None:
        """Why a memory of ``scope`` and ``sensitivity`` is withheld (a key of recall's
        ``filtered_out``), or ``None`` when the principal may read it."""
        if scope not in self.scopes:
            return SCOPE_NOT_ALLOWED
        if sensitivity not in self.levels:
            return ABOVE_CLEARANCE
        return None

    def explain(self, reason: str) -> str:
        """A sentence for one of :meth:`denies`'s reasons."""
        who = f"role {', '.join(self.roles) or '(none)'}"
        if reason == SCOPE_NOT_ALLOWED:
            allowed = ", ".join(s.value for s in Scope if s in self.scopes) or "none"
            return f"{who} reads the scopes {allowed} (the tenant's read_access table)"
        return (
            f"{who} reads memories up to {self.clearance.value} sensitivity "
            "(the tenant's read_access table)"
        )

    def check(self, record: MemoryRecord) -> None:
        """Raise :class:`PermissionDenied` unless the principal may read ``record``."""
        reason = self.denies(record.scope, record.sensitivity)
        if reason is None:
            return
        what = (
            f"in {record.scope.value} scope"
            if reason == SCOPE_NOT_ALLOWED
            else f"of {record.sensitivity.value} sensitivity"
        )
        raise PermissionDenied(
            f"principal {self.principal_id!r} may not read memory {record.memory_id}, "
            f"{what}: {self.explain(reason)}; a tenant admin can change the table with "
            "`tether memory policy set` (app.memory.configure)"
        )


def reader(principal: Principal, overrides: Mapping[Role, ReadAccess]) -> Reader:
    """The principal's :class:`Reader` under :data:`DEFAULT_READ_ACCESS` with the
    tenant's ``overrides`` (a role missing from them keeps its default row)."""
    roles = sorted(principal.roles, key=list(Role).index)
    rows = [overrides.get(role) or DEFAULT_READ_ACCESS[role] for role in roles]
    scopes = frozenset(scope for row in rows for scope in row.scopes)
    top = max((LEVELS.index(row.clearance) for row in rows), default=-1)
    return Reader(
        principal_id=principal.principal_id,
        roles=tuple(role.value for role in roles),
        scopes=scopes,
        clearance=LEVELS[max(top, 0)],
        levels=frozenset(LEVELS[: top + 1]),
    )
