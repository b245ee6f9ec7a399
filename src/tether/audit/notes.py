"""Operator notes: the reasons and comments of operator actions, kept out of the trail.

The audit trail cannot forget, and a reason typed at 3 a.m. may name a person. So the text
goes into ``operator_notes``, which can be erased, and the audit entry (and the run event)
carries only the note's digest: a keyed HMAC, so the trail does not reveal a short reason
to someone who guesses it. Erasing a note leaves the trail verifiable.
"""

from __future__ import annotations

import hashlib
import hmac

from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import InvalidInput, NotFound
from tether.keys import Keyring
from tether.permissions import authorize
from tether.principals import Principal
from tether.storage.base import Storage
from tether.storage.stores import OperationsStore
from tether.validation import guarded

NOTE_PURPOSE = "operator-notes"
"""The purpose label of the key that digests notes (see :mod:`tether.keys`)."""

MAX_NOTE_CHARS = 2000


def require_reason(reason: str | None, action: str) -> str:
    """The reason, stripped; refuse an action that needs one and got none.

    Raises:
        InvalidInput: no reason, only blanks, or one over :data:`MAX_NOTE_CHARS`.
    """
    text = (reason or "").strip()
    if not text:
        raise InvalidInput(f"{action} needs a reason (--reason): say why, for the audit trail")
    if len(text) > MAX_NOTE_CHARS:
        raise InvalidInput(f"the reason is {len(text)} characters; keep it under {MAX_NOTE_CHARS}")
    return text


@guarded
class OperatorNotes:
    """``app.notes``: store a note, read it back by digest, erase it."""

    def __init__(self, storage: Storage, clock: Clock, keyring: Keyring, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._audit = audit
        self._key = keyring.purpose_key(NOTE_PURPOSE)

    def digest(self, tenant_id: str, text: str) -> str:
        mac = hmac.new(self._key, f"{tenant_id}\x00{text}".encode(), hashlib.sha256)
        return "note:" + mac.hexdigest()

    def record_txn(self, txn: OperationsStore, principal: Principal, text: str) -> str:
        """Store ``text`` (once per tenant and text) and return the digest to cite."""
        digest = self.digest(principal.tenant_id, text)
        txn.insert_operator_note(
            principal.tenant_id, digest, text, at=self._clock.now(), by=principal.principal_id
        )
        return digest

    def read(self, principal: Principal, digest: str) -> str:
        authorize(principal, "notes.read")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            text = txn.get_operator_note(principal.tenant_id, digest)
        if text is None:
            raise NotFound(f"no note {digest} in tenant {principal.tenant_id!r} (erased?)")
        return text

    def erase(self, principal: Principal, digest: str) -> None:
        """Delete a note's text; entries citing its digest stay and still verify."""
        authorize(principal, "notes.erase")
        with self._storage.transaction(principal.tenant_id) as txn:
            if not txn.delete_operator_note(principal.tenant_id, digest):
                raise NotFound(f"no note {digest} in tenant {principal.tenant_id!r}")
            self._audit.record_by_txn(
                txn, principal, action="note.erased", target=digest, details={}
            )
