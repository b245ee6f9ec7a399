"""``app.subjects``: export and erasure of a data subject across the components.

A person's memories and threads are exported and erased in one transaction of the main
store (a legal hold on any of them refuses the erasure and changes nothing); the working
memory of their threads may live on Redis, so it follows that transaction, with an audit
entry of its own. Global memory about the person (held by the platform tenant) is
exported without its writer's identity and erased with the rest, in a transaction of the
platform tenant, recorded in both trails. Each component supplies its part as ``_txn`` functions
(:mod:`tether.memory.subject`, :mod:`tether.threads.subject`).
"""

from __future__ import annotations

from typing import Any

from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.ids import IdSource
from tether.memory.subject import (
    erase_subject_memories_txn,
    export_global_memories_txn,
    export_subject_memories_txn,
    insert_tombstone_txn,
    refuse_held_subject_memories_txn,
)
from tether.permissions import authorize
from tether.principals import GLOBAL_TENANT, Principal
from tether.storage.base import Storage
from tether.threads.subject import erase_user_threads_txn, export_user_threads_txn
from tether.validation import guarded
from tether.working.service import WorkingMemory


@guarded
class Subjects:
    """Everything held about a person: exported together, erased together."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        audit: AuditLog,
        *,
        working: WorkingMemory,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._audit = audit
        self._working = working

    def export(self, principal: Principal, user_id: str) -> dict[str, Any]:
        """Everything held about a person, as JSON-ready data: memories, threads (with
        their turns and summaries) and the working memory of those threads."""
        authorize(principal, "subjects.export")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant, write=False) as txn:
            memories = export_subject_memories_txn(txn, tenant, user_id)
            threads = export_user_threads_txn(txn, tenant, user_id)
        if tenant != GLOBAL_TENANT:
            with self._storage.transaction(GLOBAL_TENANT, write=False) as txn:
                memories += export_global_memories_txn(txn, principal, user_id)
        sessions = [t["thread"]["thread_id"] for t in threads]
        working = self._working.export_sessions(principal, sessions) if sessions else {}
        return {
            "tenant_id": tenant,
            "subject_id": user_id,
            "exported_at": self._clock.now(),
            "memories": memories,
            "threads": threads,
            "working_memory": {
                session: [entry.model_dump(mode="json") for entry in entries]
                for session, entries in working.items()
            },
        }

    def erase(self, principal: Principal, user_id: str) -> dict[str, int]:
        """Remove every copy of a person's memories, threads and working memory; keep a
        tombstone without the text.

        Memory records (every status), their full-text index entries, vectors, history
        versions and the decision-log entries about them go, and so do the person's
        threads with their turns and summaries. The audit trail keeps its entries: they
        name the person only by keyed hash.

        Returns:
            The counts (``memories``; ``threads``, ``thread_turns``, ``thread_summaries``
            and ``working_memory`` when there were any).

        Raises:
            Conflict: a legal hold covers one of the memories or threads, or one of the
                global memories about the person; nothing changes.
        """
        authorize(principal, "subjects.erase")
        tenant = principal.tenant_id
        now = self._clock.now()
        subject_hash = self._audit.subject_hash(tenant, user_id)
        if tenant != GLOBAL_TENANT:
            with self._storage.transaction(GLOBAL_TENANT, write=False) as txn:
                refuse_held_subject_memories_txn(txn, GLOBAL_TENANT, user_id)
        with self._storage.transaction(tenant) as txn:
            counts = {"memories": erase_subject_memories_txn(txn, tenant, user_id, subject_hash)}
            erased_threads, sessions = erase_user_threads_txn(txn, tenant, user_id)
            counts.update({name: n for name, n in erased_threads.items() if n})
            insert_tombstone_txn(
                txn,
                tenant,
                tombstone_id=str(self._ids.new_id()),
                subject_hash=subject_hash,
                erased_at=now,
                erased_by=principal.principal_id,
                counts=counts,
            )
            self._audit.record_by_txn(
                txn,
                principal,
                tenant_id=tenant,
                action="memory.subject_erased",
                target="subject",
                details=counts,
                subjects=[user_id],
            )
        if tenant != GLOBAL_TENANT:
            self._erase_global_memories(principal, user_id, counts)
        self._erase_working_memory(principal, user_id, sessions, counts)
        self._storage.compact_after_erasure()
        return counts

    def _erase_global_memories(
        self, principal: Principal, user_id: str, counts: dict[str, int]
    ) -> None:
        """Erase global memory about the person: a person's right to erasure reaches what
        the platform holds about them too. Recorded in the platform's trail (naming the
        tenant that asked) and, by the caller, in the tenant's."""
        subject_hash = self._audit.subject_hash(GLOBAL_TENANT, user_id)
        with self._storage.transaction(GLOBAL_TENANT) as txn:
            erased = erase_subject_memories_txn(txn, GLOBAL_TENANT, user_id, subject_hash)
            if not erased:
                return
            self._audit.record_txn(
                txn,
                tenant_id=GLOBAL_TENANT,
                actor_id=f"{principal.tenant_id}/{principal.principal_id}",
                action="memory.subject_erased",
                target="subject",
                details={"memories": erased},
                subjects=[user_id],
            )
        counts["global_memories"] = erased
        with self._storage.transaction(principal.tenant_id) as txn:
            self._audit.record_by_txn(
                txn,
                principal,
                action="memory.subject_global_memory_erased",
                target="subject",
                details={"global_memories": erased},
                subjects=[user_id],
            )

    def _erase_working_memory(
        self, principal: Principal, user_id: str, sessions: list[str], counts: dict[str, int]
    ) -> None:
        """Clear the working memory of the person's threads (it may live on Redis, so it
        goes after the main transaction, with an audit entry of its own)."""
        if not sessions:
            return
        erased = self._working.erase_sessions(principal, sessions)
        if not erased:
            return
        counts["working_memory"] = erased
        with self._storage.transaction(principal.tenant_id) as txn:
            self._audit.record_by_txn(
                txn,
                principal,
                action="memory.subject_working_memory_erased",
                target="subject",
                details={"sessions": len(sessions), "working_memory": erased},
                subjects=[user_id],
            )
