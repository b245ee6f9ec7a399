"""A data subject's memories in export and erasure, inside the caller's transaction.

``app.subjects`` (:mod:`tether.subjects`) calls these beside the subject's threads, in
the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tether import canonical
from tether.errors import Conflict
from tether.memory.models import MemoryRecord
from tether.memory.text import scope_key
from tether.permissions import is_platform
from tether.principals import GLOBAL_TENANT, Principal
from tether.storage.stores import MemoryStore


def export_subject_memories_txn(
    txn: MemoryStore, tenant_id: str, subject_id: str
) -> list[dict[str, Any]]:
    """Every memory about the subject (user scope and subject lists, any status),
    JSON-ready."""
    records = txn.list_subject_memories(tenant_id, subject_id)
    return [record.model_dump(mode="json") for record in records]


PLATFORM_WRITER = "platform"
"""How a global record names its writer and approver to every tenant but the platform."""


def seen_by(principal: Principal, record: MemoryRecord) -> MemoryRecord:
    """``record`` as ``principal`` may see it: a global record, read from another tenant,
    without its writer, approver, subject ids or source reference."""
    if record.tenant_id != GLOBAL_TENANT or is_platform(principal):
        return record
    return record.model_copy(
        update={
            "created_by": PLATFORM_WRITER,
            "approved_by": PLATFORM_WRITER if record.approved_by else None,
            "subjects": [],
            "source_ref": None,
        }
    )


def export_global_memories_txn(
    txn: MemoryStore, principal: Principal, subject_id: str
) -> list[dict[str, Any]]:
    """Global memories about the subject, as the principal may see them, JSON-ready."""
    records = txn.list_subject_memories(GLOBAL_TENANT, subject_id)
    return [seen_by(principal, record).model_dump(mode="json") for record in records]


def refuse_held_subject_memories_txn(
    txn: MemoryStore, tenant_id: str, subject_id: str
) -> list[MemoryRecord]:
    """The subject's memories in ``tenant_id``.

    Raises:
        Conflict: a legal hold covers the scope of one of them.
    """
    holds = {scope_key(scope, scope_id) for scope, scope_id in txn.list_memory_holds(tenant_id)}
    records = txn.list_subject_memories(tenant_id, subject_id)
    blocked = [r for r in records if scope_key(r.scope, r.scope_id) in holds]
    if blocked:
        raise Conflict(
            f"{len(blocked)} of the subject's memories are under legal hold; release the "
            "hold before erasing"
        )
    return records


def erase_subject_memories_txn(
    txn: MemoryStore, tenant_id: str, subject_id: str, subject_hash: str
) -> int:
    """Delete every memory about the subject with its index entries, vectors and history,
    and the decision-log entries about them; returns how many memories went.

    Raises:
        Conflict: a legal hold covers the scope of one of the memories (nothing is
            deleted).
    """
    records = refuse_held_subject_memories_txn(txn, tenant_id, subject_id)
    for record in records:
        txn.delete_memory_decisions_for(tenant_id, record.memory_id, subject_hash)
        txn.delete_memory(tenant_id, record.memory_id)
    txn.delete_memory_decisions_for(tenant_id, "", subject_hash)
    return len(records)


def insert_tombstone_txn(
    txn: MemoryStore,
    tenant_id: str,
    *,
    tombstone_id: str,
    subject_hash: str,
    erased_at: datetime,
    erased_by: str,
    counts: dict[str, int],
) -> None:
    """What stays of an erasure: who erased whom (by keyed hash), when, and the counts."""
    txn.insert_memory_tombstone(
        {
            "tenant_id": tenant_id,
            "tombstone_id": tombstone_id,
            "subject_hash": subject_hash,
            "erased_at": erased_at,
            "erased_by": erased_by,
            "counts": canonical.dumps(counts),
        }
    )
