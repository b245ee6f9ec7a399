"""The write path of governed memory: the batch API behind ``propose`` / ``propose_many``.

Proposals pass the write policy; what it allows (or holds) is written with its provenance,
superseding the same fact key or reinforcing a near-identical memory instead of
duplicating it; every decision is logged without the text; vectors are stored for what
was actually written (the redacted text).

Personal data and secrets are taken out before anything else sees a proposal: the
embedder (which may be a remote service) and the policy's classifier receive the text
with every finding replaced by its placeholder, never the values; the decision log keeps a
digest of that redacted text only.

Large batches are pipelined: they are cut into chunks of :data:`CHUNK` proposals, each
written in its own transaction, while the embedder computes the next chunk's vectors on
a worker thread. The write lock is never held while the model runs, and the two cores
of a small machine are both busy.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.ids import IdSource
from tether.memory.models import (
    MemoryProposal,
    MemoryRecord,
    MemoryStatus,
    PolicyDecision,
    Scope,
    Verdict,
)
from tether.memory.pii import Finding, detect, redact
from tether.memory.policy import Facts, PolicyConfig, Screen, decide
from tether.memory.text import event_terms, scope_key, tokens
from tether.memory.vectors import (
    Embedded,
    ScopeVectors,
    Stored,
    embed_memories,
    store_vectors_txn,
)
from tether.principals import GLOBAL_TENANT, Principal
from tether.storage.base import MemoryDecisionRow, Storage
from tether.storage.stores import MemoryStore, RunStore

if TYPE_CHECKING:
    from tether.memory.embeddings import Embedder

CHUNK = 256
"""Proposals per transaction (and per embedder call) in a batch."""

TWIN_CANDIDATES = 5000
"""At most this many memories sharing the near-duplicate check's probe words are compared
(a bound for pathological scopes, where every memory repeats the same long words)."""

GRACE = timedelta(days=7)
"""How long a forgotten or superseded memory is kept (hidden) before it is purged."""


class Ingest:
    """Policy, deduplication and writes for one database."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        audit: AuditLog,
        vectors: ScopeVectors,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._audit = audit
        self.ids = ids
        self.vectors = vectors

    def propose_many(
        self,
        principal: Principal,
        proposals: Sequence[MemoryProposal],
        config: PolicyConfig,
        embedder: Embedder | None,
    ) -> list[PolicyDecision]:
        """Decide and write ``proposals`` in order; one decision per proposal.

        Each chunk of :data:`CHUNK` proposals is one transaction: a batch that fails
        part-way keeps the chunks before the failing one (their decisions are final and
        logged) and raises. Global memory is kept in the reserved tenant
        :data:`GLOBAL_TENANT`: those records are written in a transaction of that tenant
        after the policy decided, and the decisions are logged in the proposer's tenant.
        """
        now = self._clock.now()
        screened = [screen(proposal.text) for proposal in proposals]
        decisions: list[PolicyDecision] = []
        texts = [redacted for _, redacted in screened]
        for start, embedded in _embedded_chunks(embedder, texts):
            chunk = proposals[start : start + CHUNK]
            decisions += self._propose_chunk(
                principal, chunk, screened[start : start + CHUNK], config, now, embedder, embedded
            )
        return decisions

    def _propose_chunk(
        self,
        principal: Principal,
        proposals: Sequence[MemoryProposal],
        screened: Sequence[Screened],
        config: PolicyConfig,
        now: datetime,
        embedder: Embedder | None,
        embedded: Embedded | None,
    ) -> list[PolicyDecision]:
        tenant = principal.tenant_id
        decisions: list[PolicyDecision] = []
        logged: list[MemoryDecisionRow] = []
        deferred: list[int] = []
        with self._storage.transaction(tenant) as txn:
            facts = Facts(
                effect_recorded=lambda key: _effect_recorded(txn, tenant, key),
                has_consent=lambda user: txn.has_memory_consent(tenant, user, "preferences"),
                run_writes=lambda run_id: txn.count_run_memories(tenant, run_id),
            )
            writer = _ChunkWriter(self, txn, tenant, principal, config, now, embedder, embedded)
            for position, proposal in enumerate(proposals):
                findings, redacted = screened[position]
                vector = embedded.whole[position] if embedded is not None else None
                decision = decide(
                    proposal,
                    principal,
                    config,
                    facts,
                    findings=findings,
                    screen=Screen(redacted, vector, embedder.id if embedder else None),
                )
                if decision.verdict is not Verdict.REFUSED:
                    if proposal.scope is Scope.GLOBAL:
                        deferred.append(position)
                        decisions.append(decision)
                        continue
                    decision = writer.write(position, proposal, decision)
                decisions.append(decision)
                logged.append(self._decision_row(principal, proposal, decision, now))
            txn.insert_memory_decisions(logged)
            stored = writer.store_vectors([redacted for _, redacted in screened])
        self._vectors_written(tenant, embedder, stored, writer.versions)
        if deferred:
            texts = [redacted for _, redacted in screened]
            self._propose_global(
                principal, proposals, texts, decisions, deferred, config, now, embedder, embedded
            )
        return decisions

    def _propose_global(
        self,
        principal: Principal,
        proposals: Sequence[MemoryProposal],
        texts: Sequence[str],
        decisions: list[PolicyDecision],
        positions: list[int],
        config: PolicyConfig,
        now: datetime,
        embedder: Embedder | None,
        embedded: Embedded | None,
    ) -> None:
        with self._storage.transaction(GLOBAL_TENANT) as txn:
            writer = _ChunkWriter(
                self, txn, GLOBAL_TENANT, principal, config, now, embedder, embedded
            )
            for position in positions:
                decisions[position] = writer.write(
                    position, proposals[position], decisions[position]
                )
            stored = writer.store_vectors(texts)
        self._vectors_written(GLOBAL_TENANT, embedder, stored, writer.versions)
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.insert_memory_decisions(
                [self._decision_row(principal, proposals[p], decisions[p], now) for p in positions]
            )

    def _vectors_written(
        self,
        tenant: str,
        embedder: Embedder | None,
        stored: Stored,
        versions: dict[str, int],
    ) -> None:
        if embedder is not None and stored:
            self.vectors.appended(tenant, embedder.id, stored, versions)

    def _decision_row(
        self,
        principal: Principal,
        proposal: MemoryProposal,
        decision: PolicyDecision,
        now: datetime,
    ) -> MemoryDecisionRow:
        tenant = principal.tenant_id
        return {
            "tenant_id": tenant,
            "decision_id": str(self.ids.new_id()),
            "at": now,
            "principal_id": principal.principal_id,
            "verdict": decision.verdict.value,
            "reasons": canonical.dumps([r.model_dump() for r in decision.reasons]),
            "findings": canonical.dumps(decision.findings),
            "text_digest": hashlib.sha256(decision.redacted_text.encode()).hexdigest(),
            "subject_hashes": canonical.dumps(
                [self._audit.subject_hash(tenant, s) for s in subjects_of(proposal)]
            ),
            "memory_id": decision.memory_id,
            "run_id": proposal.run_id,
        }


class _ChunkWriter:
    """Writes one chunk's allowed proposals in an open transaction of one tenant."""

    def __init__(
        self,
        ingest: Ingest,
        txn: MemoryStore,
        tenant: str,
        principal: Principal,
        config: PolicyConfig,
        now: datetime,
        embedder: Embedder | None,
        embedded: Embedded | None,
    ) -> None:
        self._ids = ingest.ids
        self._txn = txn
        self._tenant = tenant
        self._principal = principal
        self._config = config
        self._now = now
        self._embedder = embedder
        self._embedded = embedded
        self.written: list[tuple[MemoryRecord, int]] = []
        self.words: dict[str, frozenset[str]] = {}
        """The content words of the memories this chunk's near-duplicate checks compared,
        by memory id: a batch's texts are compared with the same memories over and over."""
        self.versions: dict[str, int] = {}
        """The stored scopes' vector counters after this chunk's bump."""

    def write(
        self, position: int, proposal: MemoryProposal, decision: PolicyDecision
    ) -> PolicyDecision:
        """Write what ``decision`` allows or holds; the decision with id and action."""
        txn, tenant, now = self._txn, self._tenant, self._now
        text = decision.redacted_text
        held = decision.verdict is Verdict.HELD
        previous = None
        if proposal.fact_key:
            current = [
                r
                for r in txn.list_memories_by_fact_key(
                    tenant, proposal.scope.value, proposal.scope_id, proposal.fact_key
                )
                if r.status is MemoryStatus.ACTIVE
            ]
            previous = current[-1] if current else None
        threshold = self._config.reinforce_similarity
        # A fact key names the fact: another key is another fact, however alike the words.
        if previous is None and not proposal.fact_key and not held and threshold is not None:
            twin = near_duplicate_txn(txn, tenant, proposal, text, threshold, self.words)
            if twin is not None:
                reinforced = twin.model_copy(
                    update={
                        "confidence": min(1.0, max(twin.confidence, proposal.confidence) + 0.05),
                        "updated_at": now,
                    }
                )
                txn.update_memory(reinforced)
                return decision.model_copy(
                    update={"memory_id": twin.memory_id, "action": "reinforced"}
                )
        record = self._record(proposal, text, held, previous, decision.retention_days)
        txn.insert_memory(record, index_context(proposal))
        self.written.append((record, position))
        if previous is not None and not held:
            superseded = previous.model_copy(
                update={
                    "status": MemoryStatus.SUPERSEDED,
                    "superseded_by": record.memory_id,
                    "superseded_at": now,
                    "valid_to": record.valid_from,
                    "updated_at": now,
                    "purge_after": now + GRACE * 52,
                }
            )
            txn.update_memory(superseded)
        action = "held" if held else "superseded" if previous else "created"
        return decision.model_copy(update={"memory_id": record.memory_id, "action": action})

    def _record(
        self,
        proposal: MemoryProposal,
        text: str,
        held: bool,
        previous: MemoryRecord | None,
        retention: int | None,
    ) -> MemoryRecord:
        now, principal = self._now, self._principal
        return MemoryRecord(
            tenant_id=self._tenant,
            memory_id=str(self._ids.new_id()),
            scope=proposal.scope,
            scope_id=proposal.scope_id,
            subjects=subjects_of(proposal),
            kind=proposal.kind,
            fact_key=proposal.fact_key,
            text=text,
            tags=sorted(set(proposal.tags)),
            source_type=proposal.source_type,
            source_ref=proposal.source_ref,
            source_version=proposal.source_version,
            created_by=(
                principal.principal_id
                if self._tenant == principal.tenant_id
                else global_actor(principal)
            ),
            approved_by=None,
            confidence=proposal.confidence,
            sensitivity=proposal.sensitivity,
            valid_from=proposal.valid_from or now,
            valid_to=proposal.valid_to,
            created_at=now,
            updated_at=now,
            expires_at=now + timedelta(days=retention) if retention else None,
            supersedes=previous.memory_id if previous else None,
            superseded_by=None,
            superseded_at=None,
            access_count=0,
            last_access=None,
            status=MemoryStatus.PENDING if held else MemoryStatus.ACTIVE,
            purge_after=None,
            episode=proposal.episode,
        )

    def store_vectors(self, texts: Sequence[str]) -> Stored:
        """Store the vectors of the written records (the whole text's and its
        sentences'), reusing what was embedded up front (the redacted text; a record
        whose text differs from it is embedded again); what was stored, by scope key."""
        embedder, embedded, written = self._embedder, self._embedded, self.written
        if embedder is None or embedded is None or not written:
            return {}
        redacted = [
            index
            for index, (record, position) in enumerate(written)
            if record.text != texts[position]
        ]
        again = embed_memories(embedder, [written[i][0].text for i in redacted])
        replaced = {index: row for row, index in enumerate(redacted)}
        memories = []
        for index, (record, position) in enumerate(written):
            source, row = (again, replaced[index]) if index in replaced else (embedded, position)
            memories.append((record, [source.whole[row].astype("float32"), *source.parts[row]]))
        stored, self.versions = store_vectors_txn(self._txn, self._tenant, embedder, memories)
        return stored


def near_duplicate_txn(
    txn: MemoryStore,
    tenant: str,
    proposal: MemoryProposal,
    text: str,
    threshold: float,
    words_of: dict[str, frozenset[str]] | None = None,
) -> MemoryRecord | None:
    """An active memory of the proposal's scope, kind and data subjects whose content
    words overlap ``text``'s by ``threshold`` (Jaccard) or more.

    A twin about other people is no twin: merging would leave the proposal's subjects
    unlinked, so their export and erasure would not find it.

    Exact, through the full-text index: a twin at threshold ``t`` of a text with ``n``
    words lacks at most ``spare = n - ceil(t * n)`` of them, so of any ``spare + k`` of
    them it holds at least ``k``. The index is asked, unranked, for the memories holding
    ``k`` of ``spare + k`` of the text's words (``k`` as large as :func:`_probe_size`
    allows; words picked in a fixed order unrelated to their place in the text), and
    only those memories' words are compared (kept in ``words_of`` by memory id, if given,
    for the next check: a memory's text does not change).
    """
    words = set(tokens(text))
    if not words:
        return None
    spare = len(words) - math.ceil(threshold * len(words) - 1e-9)
    held = _probe_size(len(words), spare)
    probe = sorted(words, key=_spread)[: spare + held]
    matches = txn.match_memory_texts(
        tenant,
        words=probe,
        scopes=[scope_key(proposal.scope, proposal.scope_id)],
        at_least=held,
        limit=TWIN_CANDIDATES,
    )
    subjects = subjects_of(proposal)
    known = {} if words_of is None else words_of
    for match in matches:
        if match.status is not MemoryStatus.ACTIVE or match.kind is not proposal.kind:
            continue
        other = known.get(match.memory_id)
        if other is None:
            other = known[match.memory_id] = frozenset(tokens(match.text))
        if other and len(words & other) / len(words | other) >= threshold:
            twin = txn.get_memory(tenant, match.memory_id)
            if twin is not None and sorted(twin.subjects) == subjects:
                return twin
    return None


Screened = tuple[list[Finding], str]
"""A proposal's PII and secret findings and its text with each replaced by a placeholder."""


def screen(text: str) -> Screened:
    """Find PII and secrets in ``text`` and redact them all, secrets included: what the
    embedder and the policy's classifier may see."""
    findings = detect(text)
    return findings, redact(text, findings)


def _embedded_chunks(
    embedder: Embedder | None, texts: list[str]
) -> Iterator[tuple[int, Embedded | None]]:
    """``(start, vectors of texts[start:start + CHUNK])`` for each chunk; the next
    chunk is embedded on a worker thread while the caller writes this one."""
    starts = range(0, len(texts), CHUNK)
    if embedder is None:
        for start in starts:
            yield start, None
        return
    if len(starts) == 1:
        yield 0, embed_memories(embedder, texts)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="tether-embed") as worker:
        pending = worker.submit(embed_memories, embedder, texts[:CHUNK])
        for start in starts:
            vectors = pending.result()
            following = start + CHUNK
            if following < len(texts):
                chunk = texts[following : following + CHUNK]
                pending = worker.submit(embed_memories, embedder, chunk)
            yield start, vectors


def index_context(proposal: MemoryProposal) -> str | None:
    """What a memory is indexed with besides its text: the context it came from, with
    personal data and secrets redacted as the policy redacts a text (the index is not a
    way around it), and the words of its event time, so a query naming a date finds it."""
    parts = [redact(proposal.context)] if proposal.context else []
    if proposal.valid_from is not None:
        parts.append(event_terms(proposal.valid_from))
    return "\n".join(parts) or None


def subjects_of(proposal: MemoryProposal) -> list[str]:
    """The data subjects a memory is about: those named, and the user of a user scope."""
    subjects = set(proposal.subjects)
    if proposal.scope is Scope.USER:
        subjects.add(proposal.scope_id)
    return sorted(subjects)


def global_actor(principal: Principal) -> str:
    """How a global record names who wrote or approved it: tenant and principal (a ``/``
    no principal id may contain), so principals of different tenants never collide."""
    return f"{principal.tenant_id}/{principal.principal_id}"


def _effect_recorded(txn: RunStore, tenant: str, key: str) -> bool:
    """Whether ``key`` names a finished effect of a run of ``tenant``.

    Keys read ``<tenant digest>:<run>:<node>:<visit>:<position>:<name>``; calls journaled
    before the tenant digest was added read ``<run>:<node>:<visit>:<position>:<name>``.
    Both readings are tried; the stored key must match exactly.
    """
    parts = key.split(":")
    for start in (1, 0):
        if len(parts) < start + 5:
            continue
        run_id, node, visit, position = parts[start : start + 4]
        if not (visit.isdigit() and position.isdigit()):
            continue
        for entry in txn.list_journal_visit(tenant, run_id, node, int(visit)):
            if (
                entry.position == int(position)
                and entry.idempotency_key == key
                and entry.result is not None
            ):
                return True
    return False


PROBE_TERMS = 40
"""The most word lookups (groups times words per group) a near-duplicate probe may ask
the index for."""


def _probe_size(words: int, spare: int) -> int:
    """How many of ``spare + k`` probe words a twin must hold: the largest ``k`` (at least
    2, at most the words left) whose ``C(spare + k, k)`` groups of ``k`` words stay within
    :data:`PROBE_TERMS` lookups. Each word more per group means fewer false candidates;
    each lookup more costs the index a seek."""
    best = min(2, words - spare)
    for k in range(2, words - spare + 1):
        if k * math.comb(spare + k, k) > PROBE_TERMS:
            break
        best = k
    return best


def _spread(word: str) -> bytes:
    """A fixed order of words unrelated to their place in the text, so the probe words of
    a text come from all over it rather than from one phrase."""
    return hashlib.blake2b(word.encode(), digest_size=8).digest()
