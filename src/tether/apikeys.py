"""API keys of the HTTP API: each one acts as a principal of one tenant, with roles.

A key reads ``tk~<tenant>~<key id>~<secret>``. The tenant is part of the key, so a key is
looked up inside its own tenant (on PostgreSQL under row-level security, like every other
tenant read); the key id is public (listings, the audit trail, revocation); the secret is
shown once, when the key is made, and stored only as an HMAC-SHA256 of the whole key under
the ``api-key-hash`` key derived from the master key (:mod:`tether.keys`). A stolen copy of
the database therefore opens nothing, and a key made before the master key was rotated
keeps working while the retired master is kept.

A key's roles are at most its principal's: a key made with fewer roles can do less, and
when an admin takes a role away from the principal every key of theirs loses it too.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, NotFound, Unauthenticated
from tether.ids import check_name
from tether.keys import API_KEY_HASH, Keyring
from tether.permissions import authorize
from tether.principals import GLOBAL_TENANT, Principal, Role, parse_roles
from tether.storage.base import Storage
from tether.storage.rows import ApiKeyRow
from tether.validation import guarded

KEY_PREFIX = "tk"
_SEPARATOR = "~"
_KEY_ID = re.compile(r"^[0-9a-f]{16}$")
_SECRET = re.compile(r"^[0-9a-f]{64}$")
MAX_NAME = 200
_REFUSED = (
    "the API key is not valid: it is unknown, revoked or expired, or its principal is gone; "
    "ask an admin for a key (`tether api-keys create`)"
)


class ApiKey(BaseModel):
    """An API key as listed: everything but the secret."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    key_id: str
    prefix: str
    """The key's public beginning (``tk~<tenant>~<key id>``): how to recognise it."""
    principal_id: str
    roles: list[Role]
    name: str
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None

    @classmethod
    def from_row(cls, row: ApiKeyRow) -> ApiKey:
        return cls(
            tenant_id=row.tenant_id,
            key_id=row.key_id,
            prefix=_SEPARATOR.join((KEY_PREFIX, row.tenant_id, row.key_id)),
            principal_id=row.principal_id,
            roles=sorted(parse_roles(canonical.loads(row.roles_json))),
            name=row.name,
            created_at=row.created_at,
            created_by=row.created_by,
            expires_at=row.expires_at,
            revoked_at=row.revoked_at,
            revoked_by=row.revoked_by,
        )


class NewApiKey(BaseModel):
    """A key just made: ``secret`` is the whole key, shown this once and never again."""

    model_config = ConfigDict(frozen=True)

    key: ApiKey
    secret: str


def _digest(key: bytes, raw_key: str) -> str:
    return hmac.new(key, raw_key.encode(), hashlib.sha256).hexdigest()


@guarded
class ApiKeys:
    """``app.api_keys``: make, list and revoke API keys, and resolve one to its principal."""

    def __init__(self, storage: Storage, clock: Clock, keyring: Keyring, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._keyring = keyring
        self._audit = audit

    def create(
        self,
        by: Principal,
        principal_id: str,
        roles: Iterable[str] | None = None,
        *,
        name: str = "",
        expires_in_days: int | None = None,
    ) -> NewApiKey:
        """Make a key acting as ``principal_id`` of the admin's tenant.

        Args:
            roles: the key's roles, each one the principal holds (default: all of them).
            name: a label for listings (what the key is for).
            expires_in_days: the key stops working after this many days (default never).

        Raises:
            NotFound: the principal does not exist in the tenant.
            InvalidInput: a role the principal does not hold, or a name too long.
        """
        authorize(by, "api_keys.create")
        tenant = by.tenant_id
        check_name(principal_id, what="principal")
        if len(name) > MAX_NAME:
            raise InvalidInput(f"the key's name is {len(name)} characters: at most {MAX_NAME}")
        now = self._clock.now()
        expires = now + timedelta(days=expires_in_days) if expires_in_days else None
        key_id, secret = secrets.token_hex(8), secrets.token_hex(32)
        raw_key = _SEPARATOR.join((KEY_PREFIX, tenant, key_id, secret))
        with self._storage.transaction(tenant) as txn:
            holder = txn.get_principal(tenant, principal_id)
            if holder is None:
                raise NotFound(
                    f"principal {principal_id!r} does not exist in tenant {tenant!r}; add it "
                    "first with `tether principals add`"
                )
            held = parse_roles(canonical.loads(holder.roles_json))
            wanted = parse_roles(roles) if roles is not None else held
            if not wanted:
                raise InvalidInput("give the key at least one role")
            if not wanted <= held:
                extra = ", ".join(sorted(role.value for role in wanted - held))
                raise InvalidInput(
                    f"principal {principal_id!r} does not hold {extra}: a key's roles are "
                    "at most its principal's"
                )
            row = ApiKeyRow(
                tenant_id=tenant,
                key_id=key_id,
                principal_id=principal_id,
                roles_json=canonical.dumps(sorted(wanted)),
                name=name,
                secret_hash=_digest(self._keyring.purpose_key(API_KEY_HASH), raw_key),
                hash_key_id=self._keyring.current_id,
                created_at=now,
                created_by=by.principal_id,
                expires_at=expires,
            )
            txn.insert_api_key(row)
            self._audit.record_by_txn(
                txn,
                by,
                action="api_key.created",
                target=f"api_key:{key_id}",
                details={
                    "principal_id": principal_id,
                    "roles": sorted(wanted),
                    "expires_at": expires.isoformat() if expires else None,
                },
            )
        return NewApiKey(key=ApiKey.from_row(row), secret=raw_key)

    def all(self, principal: Principal, *, include_revoked: bool = False) -> list[ApiKey]:
        """The tenant's keys, oldest first (never their secrets)."""
        authorize(principal, "api_keys.all")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            rows = txn.list_api_keys(principal.tenant_id)
        return [ApiKey.from_row(row) for row in rows if include_revoked or row.revoked_at is None]

    def revoke(self, principal: Principal, key_id: str) -> ApiKey:
        """Revoke a key at once: the next request made with it is refused.

        Raises:
            NotFound: no such key in the tenant.
            Conflict: the key was revoked already.
        """
        authorize(principal, "api_keys.revoke")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant) as txn:
            if not _KEY_ID.fullmatch(key_id) or txn.get_api_key(tenant, key_id) is None:
                raise NotFound(f"API key {key_id!r} does not exist; see `tether api-keys ls`")
            now = self._clock.now()
            if not txn.revoke_api_key(tenant, key_id, at=now, by=principal.principal_id):
                raise Conflict(f"API key {key_id} was revoked already")
            self._audit.record_by_txn(
                txn, principal, action="api_key.revoked", target=f"api_key:{key_id}"
            )
            row = txn.get_api_key(tenant, key_id)
        if row is None:
            raise NotFound(f"API key {key_id} vanished while being revoked")
        return ApiKey.from_row(row)

    def authenticate(self, raw_key: str) -> Principal:
        """The principal a key acts as, with the key's roles that the principal still
        holds.

        Raises:
            Unauthenticated: the key is malformed, unknown, revoked or expired, or its
                principal no longer exists (one message for all, so keys cannot be probed).
        """
        parts = raw_key.split(_SEPARATOR) if isinstance(raw_key, str) else []
        if len(parts) != 4 or parts[0] != KEY_PREFIX:
            raise Unauthenticated(_REFUSED)
        _, tenant, key_id, secret = parts
        if not (_KEY_ID.fullmatch(key_id) and _SECRET.fullmatch(secret)):
            raise Unauthenticated(_REFUSED)
        if tenant != GLOBAL_TENANT:
            try:
                check_name(tenant, what="tenant")
            except InvalidInput:
                raise Unauthenticated(_REFUSED) from None
        with self._storage.transaction(tenant, write=False) as txn:
            row = txn.get_api_key(tenant, key_id)
            holder = txn.get_principal(tenant, row.principal_id) if row else None
        if row is None or holder is None or not self._verifies(row, raw_key):
            raise Unauthenticated(_REFUSED)
        if row.revoked_at is not None:
            raise Unauthenticated(_REFUSED)
        if row.expires_at is not None and row.expires_at <= self._clock.now():
            raise Unauthenticated(_REFUSED)
        roles = parse_roles(canonical.loads(row.roles_json))
        held = parse_roles(canonical.loads(holder.roles_json))
        return Principal(tenant, row.principal_id, roles & held)

    def _verifies(self, row: ApiKeyRow, raw_key: str) -> bool:
        key = self._keyring.purpose_key_by_id(API_KEY_HASH, row.hash_key_id)
        return key is not None and hmac.compare_digest(_digest(key, raw_key), row.secret_hash)
