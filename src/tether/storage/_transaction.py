"""The typed operations of :class:`~tether.storage.base.Transaction`, written once.

Each backend supplies its named queries and three primitives (run a query, convert a
timestamp in, convert one out); the operations themselves are shared so the backends
cannot drift apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tether.errors import UnknownTenant
from tether.storage.rows import ApiKeyRow, AuditRow, PrincipalRow, TenantRow

_BEYOND_SEQ = 2**63 - 1
"""Above every audit sequence number (the largest PostgreSQL ``bigint``)."""

Row = Mapping[str, Any]


class QueryTransaction(ABC):
    def __init__(self, queries: Mapping[str, str]) -> None:
        self._queries = queries

    @abstractmethod
    def _fetch(self, name: str, params: Mapping[str, Any]) -> list[Row]:
        """Run the named query and return its rows (empty for statements)."""

    @abstractmethod
    def _ts_in(self, moment: datetime) -> Any: ...

    @abstractmethod
    def _ts_out(self, value: Any) -> datetime: ...

    def _one(self, name: str, **params: Any) -> Row | None:
        rows = self._fetch(name, params)
        return rows[0] if rows else None

    def _tenant(self, row: Row) -> TenantRow:
        return TenantRow(
            tenant_id=row["tenant_id"],
            name=row["name"],
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
            audit_seq=int(row["audit_seq"]),
            audit_head=row["audit_head"],
        )

    def _principal(self, row: Row) -> PrincipalRow:
        return PrincipalRow(
            tenant_id=row["tenant_id"],
            principal_id=row["principal_id"],
            roles_json=row["roles"],
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
            updated_at=self._ts_out(row["updated_at"]),
            updated_by=row["updated_by"],
        )

    def _audit(self, row: Row) -> AuditRow:
        return AuditRow(
            tenant_id=row["tenant_id"],
            seq=int(row["seq"]),
            entry_id=str(row["entry_id"]),
            at=self._ts_out(row["at"]),
            actor_id=row["actor_id"],
            action=row["action"],
            target=row["target"],
            details_json=row["details"],
            subjects_json=row["subjects"],
            prev_hash=row["prev_hash"],
            entry_hash=row["entry_hash"],
        )

    def insert_tenant(self, row: TenantRow) -> None:
        self._fetch(
            "insert_tenant",
            {
                "tenant_id": row.tenant_id,
                "name": row.name,
                "created_at": self._ts_in(row.created_at),
                "created_by": row.created_by,
            },
        )

    def get_tenant(self, tenant_id: str) -> TenantRow | None:
        row = self._one("get_tenant", tenant_id=tenant_id)
        return self._tenant(row) if row else None

    def list_tenants(self) -> list[TenantRow]:
        return [self._tenant(row) for row in self._fetch("list_tenants", {})]

    def lock_audit_head(self, tenant_id: str) -> tuple[int, str]:
        row = self._one("lock_audit_head", tenant_id=tenant_id)
        if row is None:
            raise UnknownTenant(f"tenant {tenant_id!r} does not exist")
        return int(row["audit_seq"]), row["audit_head"]

    def set_audit_head(self, tenant_id: str, seq: int, head: str) -> None:
        self._fetch("set_audit_head", {"tenant_id": tenant_id, "seq": seq, "head": head})

    def insert_audit_entry(self, row: AuditRow) -> None:
        self._fetch(
            "insert_audit_entry",
            {
                "tenant_id": row.tenant_id,
                "seq": row.seq,
                "entry_id": row.entry_id,
                "at": self._ts_in(row.at),
                "actor_id": row.actor_id,
                "action": row.action,
                "target": row.target,
                "details": row.details_json,
                "subjects": row.subjects_json,
                "prev_hash": row.prev_hash,
                "entry_hash": row.entry_hash,
            },
        )

    def list_audit_entries(
        self, tenant_id: str, *, after_seq: int = 0, limit: int = 1000
    ) -> list[AuditRow]:
        rows = self._fetch(
            "list_audit_entries", {"tenant_id": tenant_id, "after_seq": after_seq, "limit": limit}
        )
        return [self._audit(row) for row in rows]

    def list_audit_latest(
        self,
        tenant_id: str,
        *,
        before_seq: int | None = None,
        target: str | None = None,
        actor_id: str | None = None,
        action: str | None = None,
        limit: int = 100,
    ) -> list[AuditRow]:
        params = {
            "tenant_id": tenant_id,
            "before_seq": _BEYOND_SEQ if before_seq is None else before_seq,
            "target": target,
            "actor_id": actor_id,
            "action": action,
            "limit": limit,
        }
        rows = self._fetch(
            "list_audit_latest_of_target"
            if target is not None
            else "list_audit_latest_of_actor"
            if actor_id is not None
            else "list_audit_latest",
            params,
        )
        return [self._audit(row) for row in rows]

    def upsert_principal(self, row: PrincipalRow) -> None:
        self._fetch(
            "upsert_principal",
            {
                "tenant_id": row.tenant_id,
                "principal_id": row.principal_id,
                "roles": row.roles_json,
                "created_at": self._ts_in(row.created_at),
                "created_by": row.created_by,
                "updated_at": self._ts_in(row.updated_at),
                "updated_by": row.updated_by,
            },
        )

    def get_principal(self, tenant_id: str, principal_id: str) -> PrincipalRow | None:
        row = self._one("get_principal", tenant_id=tenant_id, principal_id=principal_id)
        return self._principal(row) if row else None

    def list_principals(self, tenant_id: str) -> list[PrincipalRow]:
        return [
            self._principal(r) for r in self._fetch("list_principals", {"tenant_id": tenant_id})
        ]

    def get_meta(self, key: str) -> str | None:
        row = self._one("get_meta", key=key)
        return str(row["value"]) if row else None

    def _api_key(self, row: Row) -> ApiKeyRow:
        expires, revoked = row["expires_at"], row["revoked_at"]
        return ApiKeyRow(
            tenant_id=row["tenant_id"],
            key_id=row["key_id"],
            principal_id=row["principal_id"],
            roles_json=row["roles"],
            name=row["name"],
            secret_hash=row["secret_hash"],
            hash_key_id=row["hash_key_id"],
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
            expires_at=self._ts_out(expires) if expires is not None else None,
            revoked_at=self._ts_out(revoked) if revoked is not None else None,
            revoked_by=row["revoked_by"],
        )

    def insert_api_key(self, row: ApiKeyRow) -> None:
        self._fetch(
            "insert_api_key",
            {
                "tenant_id": row.tenant_id,
                "key_id": row.key_id,
                "principal_id": row.principal_id,
                "roles": row.roles_json,
                "name": row.name,
                "secret_hash": row.secret_hash,
                "hash_key_id": row.hash_key_id,
                "created_at": self._ts_in(row.created_at),
                "created_by": row.created_by,
                "expires_at": self._ts_in(row.expires_at) if row.expires_at else None,
            },
        )

    def get_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRow | None:
        row = self._one("get_api_key", tenant_id=tenant_id, key_id=key_id)
        return self._api_key(row) if row else None

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRow]:
        return [self._api_key(r) for r in self._fetch("list_api_keys", {"tenant_id": tenant_id})]

    def revoke_api_key(self, tenant_id: str, key_id: str, *, at: datetime, by: str) -> bool:
        rows = self._fetch(
            "revoke_api_key",
            {
                "tenant_id": tenant_id,
                "key_id": key_id,
                "revoked_at": self._ts_in(at),
                "revoked_by": by,
            },
        )
        return bool(rows)
