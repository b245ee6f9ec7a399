"""Writing and reading the audit trail."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.audit.chain import VerifyReport, entry_hash, is_keyed, verify_chain
from tether.clock import Clock
from tether.errors import InvalidInput, UnknownTenant
from tether.ids import IdSource
from tether.keys import Keyring
from tether.permissions import authorize
from tether.principals import Principal
from tether.storage.base import AuditRow, Storage, iter_audit_entries
from tether.storage.stores import CoreStore
from tether.validation import guarded

_ACTION = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")


class AuditEntry(BaseModel):
    """One entry of a tenant's audit trail, as read back."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    seq: int
    entry_id: str
    at: datetime
    actor_id: str
    action: str
    target: str
    details: dict[str, Any]
    subject_hashes: list[str]
    prev_hash: str
    entry_hash: str

    @classmethod
    def from_row(cls, row: AuditRow) -> AuditEntry:
        return cls(**_entry_fields(row))


def _entry_fields(row: AuditRow) -> dict[str, Any]:
    return {
        "tenant_id": row.tenant_id,
        "seq": row.seq,
        "entry_id": row.entry_id,
        "at": row.at,
        "actor_id": row.actor_id,
        "action": row.action,
        "target": row.target,
        "details": canonical.loads(row.details_json),
        "subject_hashes": canonical.loads(row.subjects_json),
        "prev_hash": row.prev_hash,
        "entry_hash": row.entry_hash,
    }


@guarded
class AuditLog:
    """Append-only, hash-chained per tenant.

    Data subjects (the people an action is about) are recorded as keyed hashes, never as
    text, so erasing a person later leaves the chain intact. Callers must keep personal
    data out of ``details`` and ``target``: name records by id.
    """

    def __init__(self, storage: Storage, clock: Clock, ids: IdSource, keyring: Keyring) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._keyring = keyring

    def subject_hash(self, tenant_id: str, subject_id: str) -> str:
        """The keyed hash under which ``subject_id`` appears in ``tenant_id``'s trail."""
        message = f"{tenant_id}\x00{subject_id}".encode()
        return hmac.new(self._keyring.subject_key, message, hashlib.sha256).hexdigest()

    def record_txn(
        self,
        txn: CoreStore,
        *,
        tenant_id: str,
        actor_id: str,
        action: str,
        target: str,
        details: Mapping[str, Any] | None = None,
        subjects: Iterable[str] = (),
    ) -> AuditEntry:
        """Append an entry inside ``txn``; it lands only if the transaction commits.

        Args:
            action: dotted lowercase name, e.g. ``tenant.created``, ``run.cancelled``.
            target: what was acted on, by id (``run:0190…``), never personal data.
            subjects: ids of the people the action concerns; stored only as keyed hashes.
        """
        seq, head = txn.lock_audit_head(tenant_id)
        row = self.next_entry(
            tenant_id,
            seq,
            head,
            actor_id=actor_id,
            action=action,
            target=target,
            details=details,
            subjects=subjects,
        )
        txn.insert_audit_entry(row)
        txn.set_audit_head(tenant_id, row.seq, row.entry_hash)
        # Built from the values just written (no validation: they are the row's own).
        return AuditEntry.model_construct(**_entry_fields(row))

    def next_entry(
        self,
        tenant_id: str,
        seq: int,
        head: str,
        *,
        actor_id: str,
        action: str,
        target: str,
        details: Mapping[str, Any] | None = None,
        subjects: Iterable[str] = (),
    ) -> AuditRow:
        """The signed entry that follows the tenant's head (``seq``, ``head``: as locked
        in the transaction that will store it, which must also move the head to it)."""
        if not _ACTION.match(action):
            raise InvalidInput(
                f"audit action {action!r} must be dotted lowercase, e.g. run.cancelled"
            )
        hashes = sorted({self.subject_hash(tenant_id, subject) for subject in subjects})
        unsigned = AuditRow(
            tenant_id=tenant_id,
            seq=seq + 1,
            entry_id=str(self._ids.new_id()),
            at=self._clock.now(),
            actor_id=actor_id,
            action=action,
            target=target,
            details_json=canonical.dumps(dict(details or {})),
            subjects_json=canonical.dumps(hashes) if hashes else "[]",
            prev_hash=head,
            entry_hash="",
        )
        return AuditRow(**{**unsigned.__dict__, "entry_hash": entry_hash(unsigned, self._keyring)})

    def record_by_txn(
        self,
        txn: CoreStore,
        principal: Principal,
        *,
        action: str,
        target: str,
        details: Mapping[str, Any] | None = None,
        subjects: Iterable[str] = (),
        tenant_id: str | None = None,
    ) -> AuditEntry:
        """:meth:`record_txn` for an action ``principal`` took, in its own tenant unless
        ``tenant_id`` names another (an operator acting on the global tenant)."""
        return self.record_txn(
            txn,
            tenant_id=principal.tenant_id if tenant_id is None else tenant_id,
            actor_id=principal.principal_id,
            action=action,
            target=target,
            details=details,
            subjects=subjects,
        )

    def seal_unkeyed_trails(self) -> list[str]:
        """Append a keyed ``audit.keyed`` entry to every trail that ends on an unkeyed one.

        Trails written before keys existed end on a plain SHA-256 hash, which anyone who
        can write the database could recompute; the keyed entry chains onto it, so from
        then on the whole prefix verifies only as it stands. ``tether migrate`` runs this.

        Returns:
            The tenants whose trails were sealed.
        """
        with self._storage.system_transaction() as txn:
            unsealed = [
                tenant
                for tenant in txn.list_tenants()
                if tenant.audit_head and not is_keyed(tenant.audit_head)
            ]
            for tenant in unsealed:
                self.record_txn(
                    txn,
                    tenant_id=tenant.tenant_id,
                    actor_id="system",
                    action="audit.keyed",
                    target=f"tenant:{tenant.tenant_id}",
                    details={
                        "unkeyed_entries": tenant.audit_seq,
                        "key_id": self._keyring.current_id,
                    },
                )
        return [tenant.tenant_id for tenant in unsealed]

    def entries(
        self, principal: Principal, *, after_seq: int = 0, limit: int = 100
    ) -> list[AuditEntry]:
        """The principal's tenant's entries in order, after ``after_seq``."""
        authorize(principal, "audit.entries")
        tenant_id = principal.tenant_id
        with self._storage.transaction(tenant_id, write=False) as txn:
            rows = txn.list_audit_entries(tenant_id, after_seq=after_seq, limit=limit)
        return [AuditEntry.from_row(row) for row in rows]

    def latest(
        self,
        principal: Principal,
        *,
        before_seq: int | None = None,
        target: str | None = None,
        actor_id: str | None = None,
        action: str | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        """The principal's tenant's entries newest first, as a reviewer reads a trail.

        Args:
            before_seq: continue a listing below this sequence number (the last entry's
                ``seq`` of the previous page); pages neither repeat nor skip an entry.
            target: only entries about this object (``run:<id>``, ``memory:<id>``…).
            actor_id: only entries by this principal.
            action: only this action (``run.cancelled``…).
        """
        authorize(principal, "audit.latest")
        if before_seq is not None and before_seq < 1:
            raise InvalidInput("before_seq must be an entry's sequence number (1 or more)")
        if not 1 <= limit <= 10_000:
            raise InvalidInput("limit must be between 1 and 10000")
        tenant_id = principal.tenant_id
        with self._storage.transaction(tenant_id, write=False) as txn:
            rows = txn.list_audit_latest(
                tenant_id,
                before_seq=before_seq,
                target=target or None,
                actor_id=actor_id or None,
                action=action or None,
                limit=limit,
            )
        return [AuditEntry.from_row(row) for row in rows]

    def verify(self, tenant_id: str) -> VerifyReport:
        """Check the tenant's whole chain; the report names the first broken entry."""
        with self._storage.transaction(tenant_id, write=False) as txn:
            tenant = txn.get_tenant(tenant_id)
            if tenant is None:
                raise UnknownTenant(f"tenant {tenant_id!r} does not exist; see `tether tenants ls`")
            return verify_chain(
                tenant_id,
                iter_audit_entries(txn, tenant_id),
                head_seq=tenant.audit_seq,
                head_hash=tenant.audit_head,
                keyring=self._keyring,
            )
