"""The chain of the audit trail: how an entry's hash is made and how a chain is checked.

Pure functions over stored rows; no database here. Each entry's hash covers its content
and the previous entry's hash, so editing, deleting or reordering any entry breaks the
chain at that point. The sequence number is not hashed: it is checked by position, so a
renumbering shows up as a gap or a broken link rather than a silent edit.

Entries are chained with HMAC-SHA256 under the ``audit-chain`` key (see
:mod:`tether.keys`), which is kept outside the database: whoever can write the database
but not read the key cannot make an entry that verifies. Their hash reads
``hmac-sha256:<key id>:<hex>``. Entries written before keys existed carry a plain
SHA-256 hash (64 hex digits); they still verify, but only as a prefix of the trail that
a keyed entry seals (``tether migrate`` appends one to each such trail): a plain entry
after a keyed one, or a trail that ends on a plain entry, is reported as forged.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tether import canonical
from tether.clock import format_timestamp
from tether.keys import AUDIT_CHAIN, Keyring
from tether.storage.base import AuditRow

GENESIS = ""
"""The ``prev_hash`` of a tenant's first entry."""

HMAC_PREFIX = "hmac-sha256:"

ProblemKind = Literal["edited", "missing", "reordered", "truncated", "forged"]


def _content(row: AuditRow) -> bytes:
    content = {
        "tenant_id": row.tenant_id,
        "entry_id": row.entry_id,
        "at": format_timestamp(row.at),
        "actor_id": row.actor_id,
        "action": row.action,
        "target": row.target,
        "details": row.details_json,
        "subjects": row.subjects_json,
        "prev_hash": row.prev_hash,
    }
    # Every field is text Tether made or checked when the entry was written.
    return canonical.dumps(content, trusted=True).encode("utf-8")


def legacy_hash(row: AuditRow) -> str:
    """Plain SHA-256 of an entry: how entries were chained before keys existed."""
    return hashlib.sha256(_content(row)).hexdigest()


def entry_hash(row: AuditRow, keyring: Keyring) -> str:
    """The keyed hash of an entry, under the current master key."""
    key = keyring.purpose_key(AUDIT_CHAIN)
    digest = hmac.new(key, _content(row), hashlib.sha256).hexdigest()
    return f"{HMAC_PREFIX}{keyring.current_id}:{digest}"


def is_keyed(hash_text: str) -> bool:
    return hash_text.startswith(HMAC_PREFIX)


def _matches(row: AuditRow, keyring: Keyring) -> bool | None:
    """Whether the stored hash is right; ``None`` if it names a key this keyring lacks."""
    if not is_keyed(row.entry_hash):
        return hmac.compare_digest(legacy_hash(row), row.entry_hash)
    kid, _, digest = row.entry_hash[len(HMAC_PREFIX) :].partition(":")
    key = keyring.purpose_key_by_id(AUDIT_CHAIN, kid)
    if key is None:
        return None
    expected = hmac.new(key, _content(row), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, digest)


@dataclass(frozen=True)
class ChainProblem:
    """The first place the chain breaks."""

    kind: ProblemKind
    seq: int
    entry_id: str | None
    message: str


@dataclass(frozen=True)
class VerifyReport:
    tenant_id: str
    entries_checked: int
    head_seq: int
    problem: ChainProblem | None

    @property
    def ok(self) -> bool:
        return self.problem is None


def verify_chain(
    tenant_id: str,
    rows: Iterable[AuditRow],
    *,
    head_seq: int,
    head_hash: str,
    keyring: Keyring,
) -> VerifyReport:
    """Walk a tenant's entries in sequence order and name the first broken one.

    ``head_seq`` and ``head_hash`` are what the tenant row says the last entry is; they
    catch entries deleted from the end, which leave no gap behind them. Without the key
    that signed an entry it cannot be checked, and is reported as such.
    """
    expected_seq = 1
    previous = GENESIS
    seen: dict[str, int] = {}
    checked = 0
    last_id: str | None = None

    def report(problem: ChainProblem | None) -> VerifyReport:
        return VerifyReport(tenant_id, checked, head_seq, problem)

    keyed_seen = False
    iterator = iter(rows)
    for row in iterator:
        checked += 1
        matches = _matches(row, keyring)
        if matches is None:
            return report(
                ChainProblem(
                    "forged",
                    row.seq,
                    row.entry_id,
                    f"entry #{row.seq} ({row.entry_id}) is signed with a key this process "
                    "does not hold: configure the key it was written with (a retired key "
                    "goes after the current one in the key file), or it was forged",
                )
            )
        if keyed_seen and not is_keyed(row.entry_hash):
            return report(
                ChainProblem(
                    "forged",
                    row.seq,
                    row.entry_id,
                    f"entry #{row.seq} ({row.entry_id}) carries an unkeyed hash after keyed "
                    "entries: it was written without the audit key",
                )
            )
        keyed_seen = keyed_seen or is_keyed(row.entry_hash)
        if not matches:
            return report(
                ChainProblem(
                    "edited",
                    row.seq,
                    row.entry_id,
                    f"entry #{row.seq} ({row.entry_id}) was modified or forged: its content "
                    "does not match its hash",
                )
            )
        if row.seq != expected_seq:
            return report(
                ChainProblem(
                    "missing",
                    expected_seq,
                    None,
                    f"entry #{expected_seq} is missing: the next entry present is #{row.seq} "
                    f"({row.entry_id})",
                )
            )
        if row.prev_hash != previous:
            if row.prev_hash == GENESIS:
                where: str | None = "the start of the trail"
            elif row.prev_hash in seen:
                where = f"entry #{seen[row.prev_hash]}"
            else:
                where = next(
                    (
                        f"entry #{later.seq}"
                        for later in iterator
                        if later.entry_hash == row.prev_hash
                    ),
                    None,
                )
            if where is not None:
                return report(
                    ChainProblem(
                        "reordered",
                        row.seq,
                        row.entry_id,
                        f"entry #{row.seq} ({row.entry_id}) is out of order: it was written "
                        f"to follow {where}, not entry #{row.seq - 1}",
                    )
                )
            return report(
                ChainProblem(
                    "missing",
                    row.seq,
                    row.entry_id,
                    f"entry #{row.seq} ({row.entry_id}) does not follow entry #{row.seq - 1}: "
                    "an entry before it was removed or replaced",
                )
            )
        seen[row.entry_hash] = row.seq
        previous = row.entry_hash
        last_id = row.entry_id
        expected_seq += 1
    last = expected_seq - 1
    if last and not keyed_seen:
        return report(
            ChainProblem(
                "forged",
                last,
                last_id,
                f"the trail ends at entry #{last} without a keyed entry: entries written "
                "without the audit key are not sealed (run `tether migrate`, which seals a "
                "trail written before keys existed), or the trail was rewritten",
            )
        )
    if head_seq == last and last and head_hash != previous:
        return report(
            ChainProblem(
                "edited",
                last,
                last_id,
                f"entry #{last} ({last_id}) was replaced: its hash does not match the one the "
                "tenant recorded when it was written",
            )
        )
    if head_seq != last:
        return report(
            ChainProblem(
                "truncated",
                last + 1,
                None,
                f"the trail ends at entry #{last} but the tenant's head says #{head_seq}: "
                "entries were removed from the end",
            )
        )
    return report(None)
