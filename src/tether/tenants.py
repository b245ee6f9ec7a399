"""Tenants and the principals inside them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, NotFound, UnknownTenant
from tether.ids import check_name
from tether.permissions import authorize
from tether.principals import (
    GLOBAL_TENANT,
    RESERVED_PREFIX,
    SYSTEM_ACTOR,
    Principal,
    Role,
    check_principal_id,
    parse_roles,
)
from tether.storage.base import PrincipalRow, Storage, TenantRow
from tether.storage.stores import CoreStore
from tether.validation import guarded


class Tenant(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    name: str
    created_at: datetime
    created_by: str
    audit_entries: int

    @classmethod
    def from_row(cls, row: TenantRow) -> Tenant:
        return cls(
            tenant_id=row.tenant_id,
            name=row.name,
            created_at=row.created_at,
            created_by=row.created_by,
            audit_entries=row.audit_seq,
        )


class PrincipalRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    principal_id: str
    roles: list[Role]
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str

    @classmethod
    def from_row(cls, row: PrincipalRow) -> PrincipalRecord:
        return cls(
            tenant_id=row.tenant_id,
            principal_id=row.principal_id,
            roles=sorted(parse_roles(canonical.loads(row.roles_json))),
            created_at=row.created_at,
            created_by=row.created_by,
            updated_at=row.updated_at,
            updated_by=row.updated_by,
        )

    def as_principal(self) -> Principal:
        return Principal(self.tenant_id, self.principal_id, frozenset(self.roles))


@guarded
class TenantDirectory:
    """Creates tenants, grants roles, and resolves who a caller is."""

    def __init__(self, storage: Storage, clock: Clock, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._audit = audit
        self._known: set[str] = set()

    def create(
        self, tenant_id: str, *, name: str | None = None, admin: str | None = None
    ) -> Tenant:
        """Register a tenant (a maintenance action, done as the system).

        Args:
            admin: a principal id to create with the admin role, so someone can act in it.

        Raises:
            Conflict: the tenant exists already.
        """
        check_name(tenant_id, what="tenant")
        if admin is not None:
            check_principal_id(admin)
        now = self._clock.now()
        row = TenantRow(tenant_id, name or tenant_id, now, SYSTEM_ACTOR, 0, "")
        with self._storage.system_transaction() as txn:
            if txn.get_tenant(tenant_id) is not None:
                raise Conflict(f"tenant {tenant_id!r} already exists")
            txn.insert_tenant(row)
            self._audit.record_txn(
                txn,
                tenant_id=tenant_id,
                actor_id=SYSTEM_ACTOR,
                action="tenant.created",
                target=f"tenant:{tenant_id}",
                details={"name": row.name},
            )
            if admin is not None:
                self._grant_txn(txn, tenant_id, admin, frozenset({Role.ADMIN}), SYSTEM_ACTOR)
            created = txn.get_tenant(tenant_id)
        if created is None:
            raise UnknownTenant(f"tenant {tenant_id!r} vanished while being created")
        self._known.add(tenant_id)
        return Tenant.from_row(created)

    def get(self, tenant_id: str) -> Tenant:
        """The tenant, or :class:`UnknownTenant` with a hint."""
        check_name(tenant_id, what="tenant")
        with self._storage.transaction(tenant_id, write=False) as txn:
            row = txn.get_tenant(tenant_id)
        if row is None:
            raise UnknownTenant(
                f"tenant {tenant_id!r} does not exist; create it with `tether tenants create "
                f"{tenant_id}` or see `tether tenants ls`"
            )
        self._known.add(tenant_id)
        return Tenant.from_row(row)

    def require(self, tenant_id: str) -> None:
        """Raise :class:`UnknownTenant` unless the tenant exists (cached once seen)."""
        if tenant_id not in self._known:
            self.get(tenant_id)

    def all(self, *, include_reserved: bool = False) -> list[Tenant]:
        """Every tenant (a maintenance read, done as the system).

        Reserved tenants (ids starting with ``_``, such as ``_global``, which holds global
        memory) are left out unless ``include_reserved``.
        """
        with self._storage.system_transaction(write=False) as txn:
            rows = txn.list_tenants()
        return [
            Tenant.from_row(row)
            for row in rows
            if include_reserved or not row.tenant_id.startswith(RESERVED_PREFIX)
        ]

    def principal(self, tenant_id: str, principal_id: str) -> Principal:
        """Resolve a principal id to its roles in the tenant (``_global``: a platform
        administrator)."""
        if tenant_id != GLOBAL_TENANT:
            self.require(tenant_id)
        check_name(principal_id, what="principal")
        with self._storage.transaction(tenant_id, write=False) as txn:
            row = txn.get_principal(tenant_id, principal_id)
        if row is None:
            raise NotFound(
                f"principal {principal_id!r} does not exist in tenant {tenant_id!r}; an admin "
                "can add it with `tether principals add`"
            )
        return PrincipalRecord.from_row(row).as_principal()

    def principals(self, principal: Principal) -> list[PrincipalRecord]:
        """The principals of the principal's tenant and their roles."""
        authorize(principal, "tenants.principals")
        tenant_id = principal.tenant_id
        if tenant_id != GLOBAL_TENANT:
            self.require(tenant_id)
        with self._storage.transaction(tenant_id, write=False) as txn:
            return [PrincipalRecord.from_row(row) for row in txn.list_principals(tenant_id)]

    def grant(self, by: Principal, principal_id: str, roles: Iterable[str]) -> PrincipalRecord:
        """Create a principal or replace its roles; only an admin may."""
        authorize(by, "tenants.grant")
        self.require(by.tenant_id)
        check_principal_id(principal_id)
        parsed = parse_roles(roles)
        if not parsed:
            raise InvalidInput("give at least one role")
        with self._storage.transaction(by.tenant_id) as txn:
            self._grant_txn(txn, by.tenant_id, principal_id, parsed, by.principal_id)
            row = txn.get_principal(by.tenant_id, principal_id)
        if row is None:
            raise NotFound(f"principal {principal_id!r} vanished while being saved")
        return PrincipalRecord.from_row(row)

    def add_platform_admin(self, principal_id: str) -> PrincipalRecord:
        """Make ``principal_id`` a platform administrator (a maintenance action, done as
        the system, like creating a tenant).

        Platform administrators are the admins of the reserved tenant ``_global``: they
        alone write global memory. No tenant admin can create one, since granting works
        only inside the granter's own tenant.
        """
        check_principal_id(principal_id)
        with self._storage.system_transaction() as txn:
            if txn.get_tenant(GLOBAL_TENANT) is None:
                raise UnknownTenant(
                    f"the platform tenant {GLOBAL_TENANT!r} is missing; run `tether migrate`"
                )
            self._grant_txn(txn, GLOBAL_TENANT, principal_id, frozenset({Role.ADMIN}), SYSTEM_ACTOR)
            row = txn.get_principal(GLOBAL_TENANT, principal_id)
        if row is None:
            raise NotFound(f"principal {principal_id!r} vanished while being saved")
        return PrincipalRecord.from_row(row)

    def _grant_txn(
        self,
        txn: CoreStore,
        tenant_id: str,
        principal_id: str,
        roles: frozenset[Role],
        actor: str,
    ) -> None:
        now = self._clock.now()
        previous = txn.get_principal(tenant_id, principal_id)
        txn.upsert_principal(
            PrincipalRow(
                tenant_id=tenant_id,
                principal_id=principal_id,
                roles_json=canonical.dumps(sorted(roles)),
                created_at=previous.created_at if previous else now,
                created_by=previous.created_by if previous else actor,
                updated_at=now,
                updated_by=actor,
            )
        )
        self._audit.record_txn(
            txn,
            tenant_id=tenant_id,
            actor_id=actor,
            action="principal.updated" if previous else "principal.created",
            target=f"principal:{principal_id}",
            details={"roles": sorted(roles)},
        )
