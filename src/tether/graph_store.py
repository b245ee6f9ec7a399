"""``app.graph_store``: LangGraph's key-value store on governed memory.

An item (namespace, key, JSON value) is a memory: its value is proposed to the write
policy in the scope its namespace maps to (the caller says which), as the canonical JSON
``{"namespace": ..., "key": ..., "value": ...}`` under a fact key of its own, so a new value
supersedes the old one and keeps its history; semantic search is memory's hybrid recall
within those scopes. A refused write raises :class:`~tether.errors.MemoryWriteRefused`
naming the rules; a held one is stored, visible once a person approves it. The item rows
hold the namespace, key, time to live and the memory's id (and disappear with the memory
when it is erased).

A store may opt out of the policy (recorded in the audit trail): its items are kept in the
item rows (value and vector of the indexed text) and are not memories, so the policy,
recall and a data subject's erasure do not see them.
"""

from __future__ import annotations

import array
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.audit.log import AuditLog
from tether.audit.notes import OperatorNotes, require_reason
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, MemoryWriteRefused
from tether.memory.models import (
    MemoryKind,
    MemoryProposal,
    MemoryRecord,
    MemoryStatus,
    PolicyDecision,
    Scope,
    SourceType,
    Verdict,
)
from tether.memory.service import Memory
from tether.permissions import authorize
from tether.principals import Principal
from tether.storage.base import Storage, Transaction
from tether.storage.rows import StoreItemRow
from tether.validation import guarded, one_of, rules

SEPARATOR = "."
"""Joins namespace labels (LangGraph refuses labels that contain it)."""
MAX_TTL_MINUTES = 60 * 24 * 365 * 10
PAGE = 500


class StoreItem(BaseModel):
    """An item as LangGraph's store returns it (``score`` set by a search with a query)."""

    model_config = ConfigDict(frozen=True)

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    score: float | None = None


@guarded
class GraphStore:
    """``app.graph_store``: the items of LangGraph stores, for the principal's tenant."""

    def __init__(
        self, storage: Storage, clock: Clock, audit: AuditLog, notes: OperatorNotes, memory: Memory
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._audit = audit
        self._notes = notes
        self._memory = memory

    # -- writing ---------------------------------------------------------------------------

    @rules(scope=one_of(Scope), kind=one_of(MemoryKind), source_type=one_of(SourceType))
    def put(
        self,
        principal: Principal,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        ttl_minutes: float | None = None,
        index_text: str | None = None,
        governed: bool = True,
        kind: MemoryKind | str = MemoryKind.FACT,
        source_type: SourceType | str = SourceType.MODEL_INFERENCE,
    ) -> PolicyDecision | None:
        """Store an item; the policy's decision (``None`` when not ``governed``).

        Governed (the default): the value goes through the write policy in ``scope`` /
        ``scope_id``; ``index_text`` (the item's indexed fields) is recalled with it.

        Raises:
            MemoryWriteRefused: the policy refused the write; nothing changed.
        """
        authorize(principal, "graph_store.put")
        name = _namespace(namespace)
        _ttl(ttl_minutes)
        data = dict(value)
        now = self._clock.now()
        expires = None if ttl_minutes is None else now + timedelta(minutes=ttl_minutes)
        if not governed:
            vector = self._vector(index_text if index_text is not None else canonical.dumps(data))
            text = canonical.dumps(data)
            self._upsert(
                principal,
                StoreItemRow(name, key, None, text, vector, now, now, ttl_minutes, expires),
            )
            return None
        if scope is None or scope_id is None:
            raise InvalidInput("a governed item needs the memory scope and scope id it goes to")
        decision = self._memory.propose(
            principal,
            MemoryProposal(
                text=canonical.dumps({"namespace": name, "key": key, "value": data}),
                kind=MemoryKind(kind),
                scope=Scope(scope),
                scope_id=scope_id,
                subjects=[scope_id] if Scope(scope) is Scope.USER else [],
                source_type=SourceType(source_type),
                source_ref=f"langgraph:{name}/{key}"[:200],
                fact_key=_fact_key(name, key),
                context=index_text[:16000] if index_text else None,
            ),
        )
        if decision.verdict is Verdict.REFUSED or decision.memory_id is None:
            refused = [r for r in decision.reasons if r.verdict is Verdict.REFUSED]
            rules_text = "; ".join(f"rule {r.rule}: {r.reason}" for r in refused)
            raise MemoryWriteRefused(
                f"the memory write policy refused item {name}/{key}: {rules_text or 'refused'}"
            )
        self._upsert(
            principal,
            StoreItemRow(name, key, decision.memory_id, None, None, now, now, ttl_minutes, expires),
        )
        return decision

    def delete(self, principal: Principal, namespace: Sequence[str], key: str) -> bool:
        """Delete an item; its memory is forgotten unless another item shares it (the
        policy reinforced one memory for both). Whether the item existed."""
        authorize(principal, "graph_store.delete")
        name = _namespace(namespace)
        with self._storage.transaction(principal.tenant_id) as txn:
            row = txn.get_store_item(principal.tenant_id, name, key)
            if row is None:
                return False
            txn.delete_store_item(principal.tenant_id, name, key)
            shared = row.memory_id is not None and (
                txn.get_store_item_by_memory(principal.tenant_id, row.memory_id) is not None
            )
        if row.memory_id is not None and not shared:
            self._forget(principal, row.memory_id)
        return True

    def opt_out(self, principal: Principal, reason: str) -> str:
        """Record in the audit trail that a store writes without the memory write policy;
        the entry cites the reason by digest (an erasable note, as operators' reasons are).
        Returns the digest."""
        authorize(principal, "graph_store.opt_out")
        text = require_reason(reason, "writing without the memory write policy")
        with self._storage.transaction(principal.tenant_id) as txn:
            digest = self._notes.record_txn(txn, principal, text)
            self._audit.record_by_txn(
                txn,
                principal,
                action="graph_store.policy_opt_out",
                target=f"tenant:{principal.tenant_id}",
                details={"reason": digest},
            )
        return digest

    def sweep(self, principal: Principal, *, limit: int = 1000) -> int:
        """Delete items whose time to live ran out (forgetting their memories); how many."""
        authorize(principal, "graph_store.sweep")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            expired = txn.list_expired_store_items(
                principal.tenant_id, now=self._clock.now(), limit=limit
            )
        for name, key, _ in expired:
            self.delete(principal, name.split(SEPARATOR), key)
        return len(expired)

    # -- reading ---------------------------------------------------------------------------

    def get(
        self, principal: Principal, namespace: Sequence[str], key: str, *, refresh_ttl: bool = True
    ) -> StoreItem | None:
        """The live item (its time to live restarted if ``refresh_ttl``), else ``None``."""
        authorize(principal, "graph_store.get")
        name = _namespace(namespace)
        tenant = principal.tenant_id
        with self._storage.transaction(tenant, write=False) as txn:
            row = txn.get_store_item(tenant, name, key)
            if row is None or _expired(row, self._clock.now()):
                return None
            items = self._items(txn, tenant, [row])
        if items and refresh_ttl and row.ttl_minutes is not None:
            with self._storage.transaction(tenant) as txn:
                self._refresh(txn, tenant, [row])
        return items[0] if items else None

    def search(
        self,
        principal: Principal,
        namespace_prefix: Sequence[str],
        *,
        query: str | None = None,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = True,
    ) -> list[StoreItem]:
        """Live items in the namespace or below it that match ``filter`` (exact values or
        ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte`` on top-level fields): newest
        first, or with ``query`` by relevance (memory's hybrid recall; items outside
        governed memory by the similarity of their indexed text)."""
        authorize(principal, "graph_store.search")
        if offset < 0:
            raise InvalidInput("offset must not be negative")
        prefix = _namespace(namespace_prefix, allow_empty=True)
        tenant = principal.tenant_id
        rows = self._live_rows(tenant, prefix)
        with self._storage.transaction(tenant, write=False) as txn:
            items = self._items(txn, tenant, rows)
        wanted = [item for item in items if matches(item.value, filter or {})]
        if query:
            wanted = self._ranked(principal, query, wanted, rows, offset + limit)
        page = wanted[offset : offset + limit]
        kept = {(i.namespace, i.key) for i in page}
        timed = [
            r for r in rows if r.ttl_minutes is not None and (_labels(r.namespace), r.key) in kept
        ]
        if timed and refresh_ttl:
            with self._storage.transaction(tenant) as txn:
                self._refresh(txn, tenant, timed)
        return page

    def namespaces(
        self,
        principal: Principal,
        *,
        prefix: Sequence[str] = (),
        suffix: Sequence[str] = (),
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Namespaces holding live items, matching ``prefix`` and ``suffix`` (``"*"``
        matches any label), cut to ``max_depth`` labels, sorted."""
        authorize(principal, "graph_store.namespaces")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            names = txn.list_store_namespaces(principal.tenant_id, now=self._clock.now())
        found: set[tuple[str, ...]] = set()
        for name in names:
            labels = _labels(name)
            if _fits(labels[: len(prefix)], prefix) and (
                not suffix or _fits(labels[-len(suffix) :], suffix)
            ):
                found.add(labels[:max_depth] if max_depth else labels)
        return sorted(found)[offset : offset + limit]

    # -- internals -------------------------------------------------------------------------

    def _upsert(self, principal: Principal, row: StoreItemRow) -> None:
        with self._storage.transaction(principal.tenant_id) as txn:
            before = txn.get_store_item(principal.tenant_id, row.namespace, row.key)
            if before is not None:
                row = replace(row, created_at=before.created_at)
            txn.upsert_store_item(principal.tenant_id, row)

    def _forget(self, principal: Principal, memory_id: str) -> None:
        with suppress(Conflict):  # forgotten already
            self._memory.forget(principal, memory_id)

    def _live_rows(self, tenant: str, prefix: str) -> list[StoreItemRow]:
        rows: list[StoreItemRow] = []
        now = self._clock.now()
        while True:
            with self._storage.transaction(tenant, write=False) as txn:
                page = txn.list_store_items(tenant, prefix, now=now, limit=PAGE, offset=len(rows))
            rows += page
            if len(page) < PAGE:
                return rows

    def _items(
        self, txn: Transaction, tenant: str, rows: Sequence[StoreItemRow]
    ) -> list[StoreItem]:
        """The rows' items; a governed one only while its memory is active."""
        ids = [row.memory_id for row in rows if row.memory_id is not None]
        records = {r.memory_id: r for r in txn.get_memories(tenant, ids)} if ids else {}
        items = []
        for row in rows:
            if row.memory_id is None:
                value = json.loads(row.value_json or "{}")
            else:
                record = records.get(row.memory_id)
                if record is None or record.status is not MemoryStatus.ACTIVE:
                    continue
                value = _memory_value(record)
            items.append(
                StoreItem(
                    namespace=_labels(row.namespace),
                    key=row.key,
                    value=value,
                    created_at=row.created_at,
                    updated_at=row.updated_at,
                )
            )
        return items

    def _refresh(self, txn: Transaction, tenant: str, rows: Sequence[StoreItemRow]) -> None:
        now = self._clock.now()
        for row in rows:
            if row.ttl_minutes is not None:
                expires = now + timedelta(minutes=row.ttl_minutes)
                txn.refresh_store_item(tenant, row.namespace, row.key, expires_at=expires)

    def _ranked(
        self,
        principal: Principal,
        query: str,
        items: list[StoreItem],
        rows: Sequence[StoreItemRow],
        wanted: int,
    ) -> list[StoreItem]:
        """``items`` by relevance to ``query``, each with its score; unrelated ones last."""
        by_place = {(_labels(r.namespace), r.key): r for r in rows}
        scores: dict[tuple[tuple[str, ...], str], float] = {}
        governed = {by_place[(i.namespace, i.key)].memory_id: i for i in items}
        governed.pop(None, None)
        scopes = self._scopes(principal, [m for m in governed if m is not None])
        if scopes:
            result = self._memory.recall(
                principal, query, scopes, limit=max(50, wanted * 3), include_unrelated=True
            )
            for hit in result.hits:
                item = governed.get(hit.record.memory_id)
                if item is not None:
                    scores[(item.namespace, item.key)] = hit.score
        plain = [i for i in items if by_place[(i.namespace, i.key)].memory_id is None]
        if plain:
            scores.update(self._similarities(query, plain, by_place))
        ranked = [
            item.model_copy(update={"score": scores.get((item.namespace, item.key), 0.0)})
            for item in items
        ]
        return sorted(ranked, key=lambda i: -(i.score or 0.0))

    def _scopes(self, principal: Principal, memory_ids: Sequence[str]) -> list[tuple[str, str]]:
        if not memory_ids:
            return []
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            records = txn.get_memories(principal.tenant_id, memory_ids)
        return sorted({(r.scope.value, r.scope_id) for r in records})

    def _similarities(
        self,
        query: str,
        items: Sequence[StoreItem],
        by_place: Mapping[tuple[tuple[str, ...], str], StoreItemRow],
    ) -> dict[tuple[tuple[str, ...], str], float]:
        """Cosine similarity of the query to each item's stored vector (word overlap
        without an embedder)."""
        embedder = self._memory.embedder
        query_vector = _floats(self._vector(query)) if embedder is not None else None
        words = set(query.lower().split())
        scores = {}
        for item in items:
            row = by_place[(item.namespace, item.key)]
            vector = _floats(row.vector)
            place = (item.namespace, item.key)
            if query_vector is not None and vector is not None and len(vector) == len(query_vector):
                scores[place] = sum(a * b for a, b in zip(query_vector, vector, strict=True))
            else:
                text = set(canonical.dumps(item.value).lower().split())
                scores[place] = len(words & text) / max(1, len(words))
        return scores

    def _vector(self, text: str) -> bytes | None:
        embedder = self._memory.embedder
        if embedder is None:
            return None
        row = embedder.embed([text])[0]
        return bytes(row.astype("<f4").tobytes())


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """Whether ``value`` meets every condition of a LangGraph store filter."""
    for field, condition in conditions.items():
        actual = value.get(field)
        if (
            isinstance(condition, Mapping)
            and condition
            and all(k.startswith("$") for k in condition)
        ):
            if not all(_compare(actual, op, expected) for op, expected in condition.items()):
                return False
        elif actual != condition:
            return False
    return True


def _compare(actual: Any, op: str, expected: Any) -> bool:
    if op == "$eq":
        return bool(actual == expected)
    if op == "$ne":
        return bool(actual != expected)
    if actual is None:
        return False
    try:
        if op == "$gt":
            return bool(actual > expected)
        if op == "$gte":
            return bool(actual >= expected)
        if op == "$lt":
            return bool(actual < expected)
        if op == "$lte":
            return bool(actual <= expected)
    except TypeError:
        return False
    raise InvalidInput(f"unknown filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte")


def _namespace(labels: Sequence[str], *, allow_empty: bool = False) -> str:
    if isinstance(labels, str):
        raise InvalidInput("a namespace is a sequence of labels, not one string")
    if not labels and not allow_empty:
        raise InvalidInput("a namespace needs at least one label")
    for label in labels:
        if not isinstance(label, str) or not label or SEPARATOR in label:
            raise InvalidInput(
                f"namespace label {label!r} must be non-empty text without {SEPARATOR!r}"
            )
    return SEPARATOR.join(labels)


def _labels(name: str) -> tuple[str, ...]:
    return tuple(name.split(SEPARATOR)) if name else ()


def _fits(labels: Sequence[str], pattern: Sequence[str]) -> bool:
    return len(labels) == len(pattern) and all(
        wanted in ("*", label) for label, wanted in zip(labels, pattern, strict=True)
    )


def _ttl(minutes: float | None) -> None:
    if minutes is not None and not (0 < minutes <= MAX_TTL_MINUTES and math.isfinite(minutes)):
        raise InvalidInput(f"ttl must be a positive number of minutes, at most {MAX_TTL_MINUTES}")


def _expired(row: StoreItemRow, now: datetime) -> bool:
    return row.expires_at is not None and row.expires_at <= now


def _fact_key(namespace: str, key: str) -> str:
    digest = hashlib.sha256(f"{namespace}\x1f{key}".encode()).hexdigest()[:40]
    return f"langgraph:{digest}"


def _memory_value(record: MemoryRecord) -> dict[str, Any]:
    """The value an item's memory holds (as the policy let it be written: redacted text
    stays redacted)."""
    try:
        stored = json.loads(record.text)
    except ValueError:
        return {"text": record.text}
    value = stored.get("value") if isinstance(stored, dict) else None
    return value if isinstance(value, dict) else {"text": record.text}


def _floats(data: bytes | None) -> list[float] | None:
    if data is None:
        return None
    values = array.array("f")
    values.frombytes(data)
    return values.tolist()
