"""The memory retention cycle's work inside one transaction: expire, decay and purge.

:meth:`tether.memory.service.Memory.retention_cycle` authorizes, reads the tenant's
confidence threshold and audits the counts; this module decides what happens to each due
memory.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from tether.memory.ingest import GRACE
from tether.memory.models import MemoryKind, MemoryStatus
from tether.memory.text import scope_key
from tether.storage.stores import MemoryStore


def age_memories_txn(
    txn: MemoryStore, tenant: str, now: datetime, *, threshold: float, decay_after_days: int
) -> Counter[str]:
    """Expire, decay and purge the tenant's due memories outside scopes under legal hold;
    the counts by what happened (``expired``, ``decayed``, ``decayed_out``, ``purged``,
    ``held``)."""
    counts: Counter[str] = Counter()
    holds = {scope_key(scope, scope_id) for scope, scope_id in txn.list_memory_holds(tenant)}
    for record in txn.list_memories_due(tenant, now=now, limit=100_000):
        if scope_key(record.scope, record.scope_id) in holds:
            counts["held"] += 1
            continue
        if record.status is MemoryStatus.ACTIVE and record.expires_at and record.expires_at <= now:
            txn.update_memory(
                record.model_copy(
                    update={
                        "status": MemoryStatus.EXPIRED,
                        "purge_after": now + GRACE,
                        "updated_at": now,
                    }
                )
            )
            counts["expired"] += 1
        elif record.status is MemoryStatus.ACTIVE:
            last_used = record.last_access or record.created_at
            if record.kind is MemoryKind.CONSTRAINT or now - last_used < timedelta(
                days=decay_after_days
            ):
                continue
            confidence = round(record.confidence - 0.1, 4)
            if confidence < threshold:
                update: dict[str, Any] = {
                    "status": MemoryStatus.EXPIRED,
                    "confidence": max(0.0, confidence),
                    "purge_after": now + GRACE,
                    "updated_at": now,
                }
                counts["decayed_out"] += 1
            else:
                update = {"confidence": confidence, "updated_at": now}
                counts["decayed"] += 1
            txn.update_memory(record.model_copy(update=update))
        elif record.purge_after is not None and record.purge_after <= now:
            txn.delete_memory(tenant, record.memory_id)
            counts["purged"] += 1
    return counts
