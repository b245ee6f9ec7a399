"""``app.memory``: propose, recall, correct and forget governed memories.

Every call takes the acting principal; its tenant scopes every read and write. Agents
propose; only :func:`tether.memory.policy.decide` lets anything be written. Export and
erasure of a data subject are ``app.subjects`` (:mod:`tether.subjects`), which erases a
person's memories (:mod:`tether.memory.subject`) with their threads and working memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from tether.ids import IdSource
from tether.memory.ingest import GRACE, Ingest
from tether.memory.models import (
    MemoryKind,
    MemoryProposal,
    MemoryRecord,
    MemoryStatus,
    PolicyDecision,
    Scope,
    SourceType,
)
from tether.memory.policy import PolicyConfig, policy_txn, reader_txn
from tether.memory.recall import LEXICAL_WEIGHT, Recall, RecallLogEntry, RecallResult
from tether.memory.retention import age_memories_txn
from tether.memory.subject import seen_by
from tether.memory.text import scope_key, scope_keys_by_owner
from tether.memory.vectors import ScopeVectors, embed_memories, store_vectors_txn
from tether.permissions import authorize, check_memory_change
from tether.principals import Principal
from tether.storage.base import Storage
from tether.storage.stores import CoreStore, MemoryStore
from tether.validation import each_of, guarded, one_of, pairs_of, rules

if TYPE_CHECKING:
    from tether.memory.embeddings import Embedder


@guarded
class Memory:
    """Governed memory for one database."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        audit: AuditLog,
        embedder: Embedder | None = None,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._audit = audit
        self.embedder = embedder
        self._vectors = ScopeVectors()
        self._ingest = Ingest(storage, clock, ids, audit, self._vectors)
        self._recall = Recall(storage, clock, ids, self._vectors, audit.subject_hash)

    # -- settings ------------------------------------------------------------------------

    def policy(self, principal: Principal) -> PolicyConfig:
        authorize(principal, "memory.policy")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return policy_txn(txn, principal.tenant_id)

    def configure(self, principal: Principal, config: PolicyConfig) -> None:
        authorize(principal, "memory.configure")
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.upsert_memory_policy(
                principal.tenant_id,
                config.model_dump_json(),
                self._clock.now(),
                principal.principal_id,
            )
            self._audit.record_by_txn(
                txn,
                principal,
                action="memory.policy_changed",
                target=f"tenant:{principal.tenant_id}",
                details=config.model_dump(mode="json"),
            )

    def grant_consent(self, principal: Principal, *, purpose: str = "preferences") -> None:
        """The principal (a user) consents to having their preferences remembered."""
        authorize(principal, "memory.grant_consent")
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.upsert_memory_consent(
                principal.tenant_id, principal.principal_id, purpose, self._clock.now(), None
            )

    def revoke_consent(self, principal: Principal, *, purpose: str = "preferences") -> None:
        authorize(principal, "memory.revoke_consent")
        now = self._clock.now()
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.upsert_memory_consent(
                principal.tenant_id, principal.principal_id, purpose, now, now
            )

    # -- writing -------------------------------------------------------------------------

    def propose(self, principal: Principal, proposal: MemoryProposal) -> PolicyDecision:
        """Run the write policy; write what it allows, hold what needs a person."""
        return self.propose_many(principal, [proposal])[0]

    def propose_many(
        self, principal: Principal, proposals: Sequence[MemoryProposal]
    ) -> list[PolicyDecision]:
        """The batch API: every proposal goes through the policy, in order.

        The texts are embedded before a write transaction opens, so the write lock is
        never held while the model runs; a large batch is written in chunks (see
        :mod:`tether.memory.ingest`), each its own transaction, while the next chunk is
        embedded.
        """
        authorize(principal, "memory.propose_many")
        return self._ingest.propose_many(
            principal, proposals, self.policy(principal), self.embedder
        )

    def approve(self, principal: Principal, memory_id: str) -> MemoryRecord:
        """Activate a held memory (approver, operator or admin; not its proposer).

        A held global memory is approved by a platform administrator (a principal of
        :data:`GLOBAL_TENANT`), never by a tenant's admin.
        """
        authorize(principal, "memory.approve")
        now = self._clock.now()
        actor = principal.principal_id
        with self._storage.transaction(principal.tenant_id) as txn:
            record = self._get_txn(txn, principal, memory_id)
            check_memory_change(principal, record.scope.value, what="approve")
            approved = self._approved_txn(txn, record, actor, actor, now)
            self._audit_txn(txn, principal, "memory.approved", approved)
            return approved

    def pending(self, principal: Principal, *, limit: int = 100) -> list[MemoryRecord]:
        """The held memories of the principal's tenant waiting for a person, oldest first
        (who may approve them; held global memories are listed to platform administrators,
        whose tenant holds them). Only those the principal may read are listed (the
        tenant's ``read_access`` table)."""
        authorize(principal, "memory.pending")
        if not 1 <= limit <= 10_000:
            raise InvalidInput(f"limit must be between 1 and 10000, not {limit}")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            access = reader_txn(txn, principal)
            held = txn.list_memories_for_tenant(
                principal.tenant_id, statuses=[MemoryStatus.PENDING.value], limit=limit
            )
        return [r for r in held if access.denies(r.scope, r.sensitivity) is None]

    def reject(self, principal: Principal, memory_id: str) -> MemoryRecord:
        """Turn down a held memory: it is deleted with every copy (index, vectors, subject
        links) and the rejection is audited; the policy's decision log keeps the fact that
        it was proposed, without its text. The record as it was is returned.

        Rejecting needs what approving needs (a held global memory: a platform
        administrator).
        """
        authorize(principal, "memory.reject")
        with self._storage.transaction(principal.tenant_id) as txn:
            record = self._get_txn(txn, principal, memory_id)
            check_memory_change(principal, record.scope.value, what="reject")
            _require_pending(record)
            txn.delete_memory(principal.tenant_id, memory_id)
            self._audit_txn(txn, principal, "memory.rejected", record)
            return record

    def _approved_txn(
        self, txn: MemoryStore, record: MemoryRecord, approver: str, actor: str, now: datetime
    ) -> MemoryRecord:
        """Activate a held record; with a ``fact_key``, it supersedes the active version(s)
        of that fact, as it would have had it not been held."""
        _require_pending(record)
        if record.created_by == actor:
            raise PermissionDenied("the proposer of a held memory may not approve it")
        current = (
            [
                other
                for other in txn.list_memories_by_fact_key(
                    record.tenant_id, record.scope.value, record.scope_id, record.fact_key
                )
                if other.status is MemoryStatus.ACTIVE and other.memory_id != record.memory_id
            ]
            if record.fact_key
            else []
        )
        approved = record.model_copy(
            update={
                "status": MemoryStatus.ACTIVE,
                "approved_by": approver,
                "updated_at": now,
            }
        )
        txn.update_memory(approved)
        for previous in current:
            txn.update_memory(
                previous.model_copy(
                    update={
                        "status": MemoryStatus.SUPERSEDED,
                        "superseded_by": record.memory_id,
                        "superseded_at": now,
                        "valid_to": max(approved.valid_from, previous.valid_from),
                        "updated_at": now,
                        "purge_after": now + GRACE * 52,
                    }
                )
            )
        return approved

    # -- changing ------------------------------------------------------------------------

    def correct(
        self, principal: Principal, memory_id: str, text: str, *, confidence: float = 0.95
    ) -> PolicyDecision:
        """Replace a memory's content, keeping the old one in its history (bi-temporal)."""
        authorize(principal, "memory.correct")
        original = self.get(principal, memory_id)
        if original.status is not MemoryStatus.ACTIVE:
            raise Conflict(
                f"memory {memory_id} is {original.status.value}; only active memories are corrected"
            )
        fact_key = original.fact_key or f"memory:{original.memory_id}"
        if original.fact_key is None:
            with self._storage.transaction(principal.tenant_id) as txn:
                txn.update_memory(original.model_copy(update={"fact_key": fact_key}))
        proposal = MemoryProposal(
            text=text,
            kind=original.kind,
            scope=original.scope,
            scope_id=original.scope_id,
            subjects=original.subjects,
            source_type=SourceType.HUMAN,
            source_ref=f"correction:{memory_id}",
            confidence=confidence,
            fact_key=fact_key,
            sensitivity=original.sensitivity,
            tags=original.tags,
            episode=original.episode,
        )
        return self.propose(principal, proposal)

    def confirm(self, principal: Principal, memory_id: str) -> MemoryRecord:
        return self._adjust(principal, memory_id, +0.1, "memory.confirmed")

    def contradict(self, principal: Principal, memory_id: str) -> MemoryRecord:
        """Lower a memory's confidence by 0.2 and mark it contradicted: once below the
        tenant's ``confidence_threshold``, recall leaves it out (counted in
        ``filtered_out``) until it is confirmed back above it."""
        return self._adjust(principal, memory_id, -0.2, "memory.contradicted")

    def _adjust(
        self, principal: Principal, memory_id: str, delta: float, action: str
    ) -> MemoryRecord:
        authorize(principal, "memory.confirm" if delta > 0 else "memory.contradict")
        with self._storage.transaction(principal.tenant_id) as txn:
            record = self._get_txn(txn, principal, memory_id)
            if delta < 0:
                check_memory_change(principal, record.scope.value, what="contradict")
            now = self._clock.now()
            updated = record.model_copy(
                update={
                    "confidence": round(min(1.0, max(0.0, record.confidence + delta)), 4),
                    "updated_at": now,
                    "contradicted_at": now if delta < 0 else record.contradicted_at,
                }
            )
            txn.update_memory(updated)
            self._audit_txn(txn, principal, action, updated)
        return updated

    def forget(self, principal: Principal, memory_id: str) -> MemoryRecord:
        """Hide a memory now; it is purged after the grace period (unless on legal hold).

        Forgetting needs what writing the memory needs: a principal whose write to its
        scope would be held for approval (an agent's to tenant memory) or refused may not
        forget it.
        """
        authorize(principal, "memory.forget")
        now = self._clock.now()
        with self._storage.transaction(principal.tenant_id) as txn:
            record = self._get_txn(txn, principal, memory_id)
            check_memory_change(principal, record.scope.value, what="forget")
            if record.status in (MemoryStatus.FORGOTTEN,):
                raise Conflict(f"memory {memory_id} is already forgotten")
            forgotten = record.model_copy(
                update={
                    "status": MemoryStatus.FORGOTTEN,
                    "purge_after": now + GRACE,
                    "updated_at": now,
                }
            )
            txn.update_memory(forgotten)
            self._audit_txn(txn, principal, "memory.forgotten", forgotten)
        return forgotten

    def invalidate_source(self, principal: Principal, source_ref: str, new_version: str) -> int:
        """A source changed: every active memory derived from another version is invalidated."""
        authorize(principal, "memory.invalidate_source")
        now = self._clock.now()
        with self._storage.transaction(principal.tenant_id) as txn:
            stale = txn.list_memories_by_source(principal.tenant_id, source_ref, new_version)
            for scope in sorted({record.scope.value for record in stale}):
                check_memory_change(principal, scope, what="invalidate")
            for record in stale:
                txn.update_memory(
                    record.model_copy(
                        update={
                            "status": MemoryStatus.INVALIDATED,
                            "valid_to": now,
                            "updated_at": now,
                            "purge_after": now + GRACE,
                        }
                    )
                )
            if stale:
                self._audit.record_by_txn(
                    txn,
                    principal,
                    action="memory.source_changed",
                    target=f"source:{source_ref}",
                    details={"new_version": new_version, "invalidated": len(stale)},
                )
        return len(stale)

    @rules(scope=one_of(Scope, optional=False))
    def place_hold(self, principal: Principal, scope: Scope, scope_id: str, reason: str) -> str:
        """A legal hold: nothing in the scope expires, decays, is purged or erased."""
        authorize(principal, "memory.place_hold")
        hold_id = str(self._ids.new_id())
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.insert_memory_hold(
                {
                    "tenant_id": principal.tenant_id,
                    "hold_id": hold_id,
                    "scope": Scope(scope).value,
                    "scope_id": scope_id,
                    "reason": reason,
                    "created_at": self._clock.now(),
                    "created_by": principal.principal_id,
                }
            )
        return hold_id

    # -- retention, vectors --------------------------------------------------------------

    def retention_cycle(
        self, principal: Principal, *, decay_after_days: int = 180
    ) -> dict[str, int]:
        """Expire, decay and purge what the policy says, in the principal's tenant.

        - active memories past ``expires_at`` become ``expired`` (purged after the grace);
        - active memories unused for ``decay_after_days`` lose confidence (0.1 per cycle)
          and expire once below the tenant's threshold (constraints never decay);
        - forgotten, superseded, expired and invalidated memories past ``purge_after`` are
          deleted with every copy (index, vectors);
        - nothing in a scope under legal hold is touched.
        """
        authorize(principal, "memory.retention_cycle")
        tenant = principal.tenant_id
        now = self._clock.now()
        threshold = self.policy(principal).confidence_threshold
        with self._storage.transaction(tenant) as txn:
            counts = age_memories_txn(
                txn, tenant, now, threshold=threshold, decay_after_days=decay_after_days
            )
            if counts:
                self._audit.record_by_txn(
                    txn,
                    principal,
                    tenant_id=tenant,
                    action="memory.retention",
                    target=f"tenant:{tenant}",
                    details=dict(counts),
                )
        return dict(counts)

    def reembed(self, principal: Principal, *, batch: int = 256) -> int:
        """Compute vectors (the whole text's and each sentence's) with the current embedder
        for every live memory of the tenant
        (a platform administrator's tenant is global memory).

        Vectors are stored under the embedder's id, so a new embedder never mixes spaces
        with an old one; recall uses only the current embedder's vectors.
        """
        authorize(principal, "memory.reembed")
        if self.embedder is None:
            raise InvalidInput("no embedder is installed: pip install 'tether[embeddings]'")
        done = 0
        for tenant in [principal.tenant_id]:
            with self._storage.transaction(tenant, write=False) as txn:
                records = txn.list_memories_for_tenant(
                    tenant, statuses=["active", "pending"], limit=1_000_000
                )
            for start in range(0, len(records), batch):
                chunk = records[start : start + batch]
                embedded = embed_memories(self.embedder, [r.text for r in chunk])
                memories = [
                    (record, [whole.astype("float32"), *parts])
                    for record, whole, parts in zip(
                        chunk, embedded.whole, embedded.parts, strict=True
                    )
                ]
                with self._storage.transaction(tenant) as txn:
                    store_vectors_txn(txn, tenant, self.embedder, memories)
                done += len(chunk)
        return done

    # -- reading -------------------------------------------------------------------------

    def get(self, principal: Principal, memory_id: str) -> MemoryRecord:
        authorize(principal, "memory.get")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return self._get_txn(txn, principal, memory_id)

    def history(self, principal: Principal, memory_id: str) -> list[MemoryRecord]:
        """Every version of the fact the principal may read, oldest first (the chain
        through ``supersedes``)."""
        authorize(principal, "memory.history")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            record = self._get_txn(txn, principal, memory_id)
            if record.fact_key is None:
                return [record]
            access = reader_txn(txn, principal)
            versions = txn.list_memories_by_fact_key(
                principal.tenant_id, record.scope.value, record.scope_id, record.fact_key
            )
        return [r for r in versions if access.denies(r.scope, r.sensitivity) is None]

    def recalls(
        self,
        principal: Principal,
        *,
        memory_id: str | None = None,
        recalled_by: str | None = None,
        before: str | None = None,
        limit: int = 100,
    ) -> list[RecallLogEntry]:
        """Who recalled what, newest first: the recalls that returned ``memory_id``, or
        those made by ``recalled_by`` (the buffered log is written first). ``before`` (the
        last ``recall_id`` of the previous page) continues a listing."""
        authorize(principal, "memory.recalls")
        self._recall.flush()
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            rows = txn.list_memory_recalls(
                principal.tenant_id,
                principal_id=recalled_by,
                memory_id=memory_id,
                before_id=before,
                limit=limit,
            )
        return [RecallLogEntry.from_row(row) for row in rows]

    @rules(scopes=pairs_of(Scope))
    def in_scopes(
        self, principal: Principal, scopes: Sequence[tuple[Scope | str, str]], *, limit: int = 100
    ) -> list[MemoryRecord]:
        """The active memories of the named scopes, oldest first, at most ``limit`` per
        tenant that holds them (a ``global`` scope is read from the platform's tenant and
        shown as :func:`seen_by` says); held, forgotten and superseded ones are left out,
        and so is what the tenant's ``read_access`` table keeps from the principal."""
        authorize(principal, "memory.in_scopes")
        if not scopes:
            raise InvalidInput("name at least one scope, e.g. user:u-1")
        keys = sorted({scope_key(scope, scope_id) for scope, scope_id in scopes})
        active = [MemoryStatus.ACTIVE.value]
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            access = reader_txn(txn, principal)
            return [
                seen_by(principal, record)
                for owner, owned in scope_keys_by_owner(principal.tenant_id, keys).items()
                for record in txn.list_memories(owner, scopes=owned, statuses=active, limit=limit)
                if access.denies(record.scope, record.sensitivity) is None
            ]

    @rules(scopes=pairs_of(Scope), kinds=each_of(MemoryKind))
    def recall(
        self,
        principal: Principal,
        query: str,
        scopes: Sequence[tuple[Scope | str, str]],
        *,
        limit: int = 10,
        kinds: Sequence[MemoryKind] | None = None,
        tags: Sequence[str] | None = None,
        min_confidence: float = 0.0,
        as_of: datetime | None = None,
        mode: str = "hybrid",
        lexical_weight: float = LEXICAL_WEIGHT,
        include_unrelated: bool = False,
    ) -> RecallResult:
        """Hybrid recall within the named scopes, every hit explained (see
        :meth:`tether.memory.recall.Recall.recall`); hits unrelated to the query are left
        out unless ``include_unrelated``.

        Global records are shown to other tenants without who wrote or approved them and
        without subject ids (see :func:`seen_by`).
        """
        result = self._recall.recall(
            principal,
            query,
            scopes,
            limit=limit,
            kinds=kinds,
            tags=tags,
            min_confidence=min_confidence,
            as_of=as_of,
            mode=mode,
            lexical_weight=lexical_weight,
            include_unrelated=include_unrelated,
            embedder=self.embedder,
        )
        hits = [
            hit.model_copy(update={"record": seen_by(principal, hit.record)}) for hit in result.hits
        ]
        return result.model_copy(update={"hits": hits})

    def flush_access(self) -> None:
        """Write the buffered recall log rows and access counts (recall does every
        ``log_every`` recalls or ``flush_every`` hits). Call it before closing."""
        self._recall.flush()

    @property
    def log_every(self) -> int:
        return self._recall.log.log_every

    @log_every.setter
    def log_every(self, value: int) -> None:
        self._recall.log.log_every = value

    @property
    def flush_every(self) -> int:
        return self._recall.log.flush_every

    @flush_every.setter
    def flush_every(self, value: int) -> None:
        self._recall.log.flush_every = value

    # -- helpers -------------------------------------------------------------------------

    def _get_txn(self, txn: MemoryStore, principal: Principal, memory_id: str) -> MemoryRecord:
        """The record, if the principal may read it (every call that returns or changes
        a memory reads it here).

        Raises:
            NotFound: no such memory in the principal's tenant.
            PermissionDenied: its scope or sensitivity is outside what the principal's
                roles read (the tenant's ``read_access`` table).
        """
        record = txn.get_memory(principal.tenant_id, memory_id)
        if record is None:
            raise NotFound(f"no memory {memory_id} in tenant {principal.tenant_id!r}")
        reader_txn(txn, principal).check(record)
        return record

    def _audit_txn(
        self, txn: CoreStore, principal: Principal, action: str, record: MemoryRecord
    ) -> None:
        self._audit.record_by_txn(
            txn,
            principal,
            action=action,
            target=f"memory:{record.memory_id}",
            details={"scope": record.scope.value, "kind": record.kind.value},
            subjects=record.subjects,
        )


def _require_pending(record: MemoryRecord) -> None:
    if record.status is not MemoryStatus.PENDING:
        raise Conflict(
            f"memory {record.memory_id} is {record.status.value}, not waiting for approval"
        )
