"""The hash chain of the audit trail: how an entry's hash is made and how a chain is checked.

Pure functions over stored rows; no database here. Each entry's hash covers its content
and the previous entry's hash, so editing, deleting or reordering any entry breaks the
chain at that point. The sequence number is not hashed: it is checked by position, so a
renumbering shows up as a gap or a broken link rather than a silent edit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tether import canonical
from tether.clock import format_timestamp
from tether.storage.base import AuditRow

GENESIS = ""
"""The ``prev_hash`` of a tenant's first entry."""

ProblemKind = Literal["edited", "missing", "reordered", "truncated"]


def entry_hash(row: AuditRow) -> str:
    """SHA-256 over the canonical JSON of an entry's content and its predecessor's hash."""
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
    return hashlib.sha256(canonical.dumps(content).encode("utf-8")).hexdigest()


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
    tenant_id: str, rows: Iterable[AuditRow], *, head_seq: int, head_hash: str
) -> VerifyReport:
    """Walk a tenant's entries in sequence order and name the first broken one.

    ``head_seq`` and ``head_hash`` are what the tenant row says the last entry is; they
    catch entries deleted from the end, which leave no gap behind them.
    """
    expected_seq = 1
    previous = GENESIS
    seen: dict[str, int] = {}
    checked = 0
    last_id: str | None = None

    def report(problem: ChainProblem | None) -> VerifyReport:
        return VerifyReport(tenant_id, checked, head_seq, problem)

    iterator = iter(rows)
    for row in iterator:
        checked += 1
        if entry_hash(row) != row.entry_hash:
            return report(
                ChainProblem(
                    "edited",
                    row.seq,
                    row.entry_id,
                    f"entry #{row.seq} ({row.entry_id}) was modified: its content does not "
                    "match its hash",
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
