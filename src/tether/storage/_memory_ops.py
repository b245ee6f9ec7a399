"""Typed storage operations of governed memory, written once over named queries."""

from __future__ import annotations

import itertools
import re
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tether import canonical
from tether.memory.models import (
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    Scope,
    Sensitivity,
    SourceType,
)
from tether.storage._scope_terms import scope_token
from tether.storage._transaction import QueryTransaction, Row
from tether.storage.rows import (
    MemoryCandidate,
    MemoryDecisionRow,
    MemoryHoldRow,
    MemoryRecallRow,
    MemoryTombstoneRow,
    TextMatch,
)

_RECORD_FIELDS = frozenset(MemoryRecord.model_fields)
_KINDS = {kind.value: kind for kind in MemoryKind}
_STATUSES = {status.value: status for status in MemoryStatus}
_SCOPES = {scope.value: scope for scope in Scope}
_SENSITIVITIES = {level.value: level for level in Sensitivity}


COMMON_WORD_MEMORIES = 5_000
"""A query word found in more memories of a scope than this is left out of that scope's
ranked full-text search when another word of the query is not (Lucene's "common terms"
cut-off). bm25 gives such a word next to no weight beside the rarer one (on SQLite, a word
in more than half the index weighs 0), while scoring its posting list costs a pass over
every memory holding it: at 100,000 memories with one word in 70% of them, a recall took
50-120 ms instead of 1-3 (bench/README.md). When every word of the query is that common,
all are searched, in full."""

_TIMES = (
    "valid_from",
    "valid_to",
    "created_at",
    "updated_at",
    "expires_at",
    "superseded_at",
    "last_access",
    "purge_after",
    "contradicted_at",
)


class MemoryOps(QueryTransaction):
    @abstractmethod
    def _array_in(self, values: Sequence[str]) -> Any: ...

    @abstractmethod
    def _fetch_many(self, name: str, params: Sequence[Mapping[str, Any]]) -> None: ...

    @abstractmethod
    def _index_text(self, text: str, context: str, scope_token: str) -> int | None:
        """Add ``text`` and its ``context`` to a separate full-text index if the backend
        keeps one; its id."""

    @abstractmethod
    def _unindex_text(self, row: Row) -> None:
        """Remove a memory row's entry from the separate full-text index, if any."""

    def _memory(self, row: Row) -> MemoryRecord:
        values = {key: row[key] for key in _RECORD_FIELDS}
        for key in _TIMES:
            values[key] = None if row[key] is None else self._ts_out(row[key])
        values["subjects"] = canonical.loads(row["subjects"])
        values["tags"] = canonical.loads(row["tags"])
        values["scope"] = Scope(values["scope"])
        values["kind"] = MemoryKind(values["kind"])
        values["source_type"] = SourceType(values["source_type"])
        values["sensitivity"] = Sensitivity(values["sensitivity"])
        values["status"] = MemoryStatus(values["status"])
        values["confidence"] = float(values["confidence"])
        values["access_count"] = int(values["access_count"])
        # Rows Tether wrote itself: build without re-validating (recall reads many).
        return MemoryRecord.model_construct(**values)

    def _candidate(self, row: Row) -> MemoryCandidate:
        """Recall builds one per candidate (up to 120 a recall): enum members are looked
        up by value in a dict and an empty tag list is not parsed."""
        valid_to, expires_at, tags = row["valid_to"], row["expires_at"], row["tags"]
        return MemoryCandidate(
            tenant_id=row["tenant_id"],
            memory_id=row["memory_id"],
            scope=_SCOPES[row["scope"]],
            sensitivity=_SENSITIVITIES[row["sensitivity"]],
            kind=_KINDS[row["kind"]],
            status=_STATUSES[row["status"]],
            tags=[] if tags == "[]" else canonical.loads(tags),
            confidence=float(row["confidence"]),
            access_count=int(row["access_count"]),
            valid_from=self._ts_out(row["valid_from"]),
            valid_to=None if valid_to is None else self._ts_out(valid_to),
            expires_at=None if expires_at is None else self._ts_out(expires_at),
            episode=row["episode"],
            contradicted=row["contradicted_at"] is not None,
            text=row["text"],
        )

    def _memory_params(self, record: MemoryRecord) -> dict[str, Any]:
        params = dict(record.__dict__)
        for key in _TIMES:
            value = params[key]
            params[key] = None if value is None else self._ts_in(value)
        for key in ("scope", "kind", "source_type", "sensitivity", "status"):
            params[key] = params[key].value
        params["subjects"] = canonical.dumps(record.subjects)
        params["tags"] = canonical.dumps(record.tags)
        return params

    def insert_memory(self, record: MemoryRecord, context: str | None = None) -> None:
        """Write a record, indexed for full-text search with ``context`` (index text
        that is never returned as the memory's text)."""
        params = self._memory_params(record)
        params["index_context"] = context
        params["fts_rowid"] = self._index_text(
            record.text,
            context or "",
            scope_token(record.tenant_id, f"{record.scope.value}:{record.scope_id}"),
        )
        self._fetch("insert_memory", params)
        for subject in record.subjects:
            self._fetch(
                "insert_memory_subject",
                {
                    "tenant_id": record.tenant_id,
                    "subject_id": subject,
                    "memory_id": record.memory_id,
                },
            )

    def update_memory(self, record: MemoryRecord) -> None:
        self._fetch("update_memory", self._memory_params(record))

    def get_memory(self, tenant_id: str, memory_id: str) -> MemoryRecord | None:
        row = self._one("get_memory", tenant_id=tenant_id, memory_id=memory_id)
        return self._memory(row) if row else None

    def get_memories(self, tenant_id: str, memory_ids: Sequence[str]) -> list[MemoryRecord]:
        """The records among ``memory_ids`` that exist in the tenant, in one query."""
        if not memory_ids:
            return []
        rows = self._fetch(
            "get_memories", {"tenant_id": tenant_id, "memory_ids": self._array_in(memory_ids)}
        )
        return [self._memory(row) for row in rows]

    def get_memory_candidates(
        self, tenant_id: str, memory_ids: Sequence[str]
    ) -> list[MemoryCandidate]:
        """What recall ranks the records among ``memory_ids`` by, in one query."""
        if not memory_ids:
            return []
        rows = self._fetch(
            "get_memory_candidates",
            {"tenant_id": tenant_id, "memory_ids": self._array_in(memory_ids)},
        )
        return [self._candidate(row) for row in rows]

    def list_memories(
        self, tenant_id: str, *, scopes: Sequence[str], statuses: Sequence[str], limit: int
    ) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_memories",
            {
                "tenant_id": tenant_id,
                "scopes": self._array_in(scopes),
                "statuses": self._array_in(statuses),
                "limit": limit,
            },
        )
        return [self._memory(row) for row in rows]

    def list_memories_for_tenant(
        self, tenant_id: str, *, statuses: Sequence[str], limit: int
    ) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_memories_for_tenant",
            {"tenant_id": tenant_id, "statuses": self._array_in(statuses), "limit": limit},
        )
        return [self._memory(row) for row in rows]

    def list_active_constraints(
        self, tenant_id: str, *, scopes: Sequence[str]
    ) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_active_constraints", {"tenant_id": tenant_id, "scopes": self._array_in(scopes)}
        )
        return [self._memory(row) for row in rows]

    def list_memories_by_fact_key(
        self, tenant_id: str, scope: str, scope_id: str, fact_key: str
    ) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_memories_by_fact_key",
            {"tenant_id": tenant_id, "scope": scope, "scope_id": scope_id, "fact_key": fact_key},
        )
        return [self._memory(row) for row in rows]

    def list_memories_by_source(
        self, tenant_id: str, source_ref: str, source_version: str
    ) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_memories_by_source",
            {"tenant_id": tenant_id, "source_ref": source_ref, "source_version": source_version},
        )
        return [self._memory(row) for row in rows]

    @abstractmethod
    def _text_query(
        self, tenant_id: str, groups: Sequence[Sequence[str]], scopes: Sequence[str]
    ) -> str:
        """The backend's full-text query for texts within ``scopes`` that hold every word
        of at least one of ``groups``."""

    def _ranked_text_query(
        self, tenant_id: str, words: Sequence[str], scopes: Sequence[str], common: int
    ) -> str:
        """The ranked search's query for texts within ``scopes`` holding any of ``words``.
        A word of more than ``common`` memories of a scope is left out of it when another
        is not (:data:`COMMON_WORD_MEMORIES`); a backend whose SQL cannot do that (SQLite)
        does it here."""
        return self._text_query(tenant_id, [[word] for word in words], scopes)

    def search_memories_text(
        self, tenant_id: str, *, words: Sequence[str], scopes: Sequence[str], limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """Best-ranked records of ``scopes`` holding any of the words, rarer words weighing
        more (bm25)."""
        rows = self._text_rows(tenant_id, [[w] for w in words], scopes, limit, ranked=True)
        records = {
            r.memory_id: r for r in self.get_memories(tenant_id, [row["memory_id"] for row in rows])
        }
        return [
            (records[row["memory_id"]], float(row["lexical_score"]))
            for row in rows
            if row["memory_id"] in records
        ]

    def search_memory_candidates(
        self, tenant_id: str, *, words: Sequence[str], scopes: Sequence[str], limit: int
    ) -> list[tuple[MemoryCandidate, float]]:
        """The ranked search of :meth:`search_memories_text` (any word, best first), as
        candidates: recall builds whole records only for its final hits."""
        rows = self._text_rows(tenant_id, [[w] for w in words], scopes, limit, ranked=True)
        return [(self._candidate(row), float(row["lexical_score"])) for row in rows]

    def match_memory_texts(
        self,
        tenant_id: str,
        *,
        words: Sequence[str],
        scopes: Sequence[str],
        at_least: int,
        limit: int,
    ) -> list[TextMatch]:
        """Memories of ``scopes`` holding at least ``at_least`` of ``words``, unranked and
        in no particular order (the caller checks each): one index query whose groups
        are every ``at_least``-word combination."""
        unique = list(dict.fromkeys(words))
        if not 1 <= at_least <= len(unique):
            return []
        groups = [list(group) for group in itertools.combinations(unique, at_least)]
        rows = self._text_rows(
            tenant_id, groups, scopes, limit, ranked=False, at_least=at_least, words=len(unique)
        )
        return [
            TextMatch(
                memory_id=row["memory_id"],
                text=row["text"],
                kind=_KINDS[row["kind"]],
                status=_STATUSES[row["status"]],
            )
            for row in rows
        ]

    def _text_rows(
        self,
        tenant_id: str,
        groups: Sequence[Sequence[str]],
        scopes: Sequence[str],
        limit: int,
        *,
        ranked: bool,
        at_least: int = 1,
        words: int = 1,
    ) -> list[Row]:
        """The ranked search's rows, or the unranked match's: memories holding every word
        of one of ``groups`` (``at_least`` of ``words`` distinct words, for a backend that
        counts them rather than matching each group)."""
        cleaned = (
            tuple(w for w in (re.sub(r"[^\w]", "", word) for word in group) if w)
            for group in groups
        )
        clean = list(dict.fromkeys(group for group in cleaned if group))
        if not clean or not scopes:
            return []
        if ranked:
            common = COMMON_WORD_MEMORIES
            match = self._ranked_text_query(tenant_id, [w for (w,) in clean], scopes, common)
            extra = {"common": common}
        else:
            match = self._text_query(tenant_id, clean, scopes)
            extra = {"at_least": at_least, "probe_words": words}
        return self._fetch(
            "search_memories_text" if ranked else "match_memories_text",
            {
                "tenant_id": tenant_id,
                "match": match,
                "scopes": self._array_in(scopes),
                "limit": limit,
                **extra,
            },
        )

    def list_subject_memories(self, tenant_id: str, subject_id: str) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_subject_memories", {"tenant_id": tenant_id, "subject_id": subject_id}
        )
        return [self._memory(row) for row in rows]

    def delete_memory(self, tenant_id: str, memory_id: str) -> None:
        """Remove a record and every copy of its text: index entry, vectors, subject links."""
        row = self._one("get_memory", tenant_id=tenant_id, memory_id=memory_id)
        if row is None:
            return
        self._unindex_text(row)
        key = {"tenant_id": tenant_id, "memory_id": memory_id}
        self._fetch("delete_memory_vectors", key)
        self.bump_scope_vectors(tenant_id, [f"{row['scope']}:{row['scope_id']}"])
        self._fetch("delete_memory_subjects", key)
        self._fetch("delete_memory", key)

    def upsert_memory_vector(
        self, tenant_id: str, memory_id: str, embedder_id: str, vector: bytes, dim: int
    ) -> None:
        self.upsert_memory_vectors(tenant_id, embedder_id, dim, [(memory_id, vector)])

    def upsert_memory_vectors(
        self,
        tenant_id: str,
        embedder_id: str,
        dim: int,
        vectors: Sequence[tuple[str, bytes]],
    ) -> None:
        """Store many ``(memory_id, vector)`` pairs of one embedder in one batch: each
        memory's whole-text vector (part 0)."""
        if not vectors:
            return
        self._fetch_many(
            "upsert_memory_vector",
            [
                {
                    "tenant_id": tenant_id,
                    "memory_id": memory_id,
                    "embedder_id": embedder_id,
                    "part": 0,
                    "dim": dim,
                    "vector": vector,
                }
                for memory_id, vector in vectors
            ],
        )

    def replace_memory_part_vectors(
        self,
        tenant_id: str,
        embedder_id: str,
        dim: int,
        parts: Sequence[tuple[str, Sequence[bytes]]],
    ) -> None:
        """Replace the sentence vectors (parts 1..) of each ``(memory_id, vectors)``
        under one embedder; an empty list leaves the memory its whole-text vector only."""
        if not parts:
            return
        self._fetch_many(
            "delete_memory_part_vectors",
            [
                {"tenant_id": tenant_id, "memory_id": memory_id, "embedder_id": embedder_id}
                for memory_id, _ in parts
            ],
        )
        rows = [
            {
                "tenant_id": tenant_id,
                "memory_id": memory_id,
                "embedder_id": embedder_id,
                "part": number,
                "dim": dim,
                "vector": vector,
            }
            for memory_id, vectors in parts
            for number, vector in enumerate(vectors, start=1)
        ]
        if rows:
            self._fetch_many("upsert_memory_vector", rows)

    def bump_scope_vectors(self, tenant_id: str, scopes: Sequence[str]) -> None:
        """Count a write of the vectors of each of ``scopes`` (one per scope per call), so
        a cached copy of them elsewhere can tell it is stale."""
        self._fetch_many(
            "bump_scope_vectors",
            [
                {"tenant_id": tenant_id, "scope_token": scope_token(tenant_id, scope)}
                for scope in dict.fromkeys(scopes)
            ],
        )

    def scope_vector_versions(self, tenant_id: str, scopes: Sequence[str]) -> dict[str, int]:
        """How many vector writes each of ``scopes`` has seen (absent: none)."""
        tokens = {scope_token(tenant_id, scope): scope for scope in scopes}
        rows = self._fetch(
            "scope_vector_versions",
            {"tenant_id": tenant_id, "scopes": self._array_in(list(tokens))},
        )
        return {tokens[row["scope_token"]]: int(row["version"]) for row in rows}

    def list_scope_vectors(
        self, tenant_id: str, *, embedder_id: str, scopes: Sequence[str]
    ) -> list[tuple[str, bytes]]:
        """Every vector of the scopes' memories under one embedder: a memory's id comes
        once per part (its whole text and each of its sentences)."""
        rows = self._fetch(
            "list_scope_vectors",
            {"tenant_id": tenant_id, "embedder_id": embedder_id, "scopes": self._array_in(scopes)},
        )
        return [(row["memory_id"], bytes(row["vector"])) for row in rows]

    def insert_memory_decision(self, values: MemoryDecisionRow) -> None:
        self.insert_memory_decisions([values])

    def insert_memory_decisions(self, decisions: Sequence[MemoryDecisionRow]) -> None:
        """Log many policy decisions in one batch."""
        if decisions:
            self._fetch_many(
                "insert_memory_decision",
                [dict(values, at=self._ts_in(values["at"])) for values in decisions],
            )

    def delete_memory_decisions_for(
        self, tenant_id: str, memory_id: str, subject_hash: str
    ) -> None:
        self._fetch(
            "delete_memory_decisions_for",
            {"tenant_id": tenant_id, "memory_id": memory_id, "subject_hash": subject_hash},
        )

    def insert_memory_recall(self, values: MemoryRecallRow) -> None:
        self._fetch("insert_memory_recall", dict(values, at=self._ts_in(values["at"])))

    def insert_memory_recalls(self, recalls: Sequence[MemoryRecallRow]) -> None:
        """Log many recalls in one batch (recall buffers its log rows)."""
        if recalls:
            self._fetch_many(
                "insert_memory_recall",
                [dict(values, at=self._ts_in(values["at"])) for values in recalls],
            )

    def list_memory_recalls(
        self,
        tenant_id: str,
        *,
        principal_id: str | None,
        memory_id: str | None,
        limit: int,
        before_id: str | None = None,
    ) -> list[MemoryRecallRow]:
        params = {
            "tenant_id": tenant_id,
            "principal_id": principal_id,
            "returned_like": f'%"{memory_id}"%' if memory_id is not None else None,
            "before_id": before_id,
            "limit": limit,
        }
        return [
            MemoryRecallRow(
                tenant_id=row["tenant_id"],
                recall_id=row["recall_id"],
                at=self._ts_out(row["at"]),
                principal_id=row["principal_id"],
                query_digest=row["query_digest"],
                scopes=row["scopes"],
                returned=row["returned"],
            )
            for row in self._fetch("list_memory_recalls", params)
        ]

    def bump_memory_access(self, tenant_id: str, hits: Mapping[str, int], at: datetime) -> None:
        when = self._ts_in(at)
        self._fetch_many(
            "bump_memory_access",
            [
                {"tenant_id": tenant_id, "memory_id": memory_id, "hits": count, "at": when}
                # In id order, as every writer of several memories: two flushes that touch
                # the same memories lock them in one order and cannot deadlock.
                for memory_id, count in sorted(hits.items())
            ],
        )

    def upsert_memory_consent(
        self,
        tenant_id: str,
        user_id: str,
        purpose: str,
        granted_at: datetime,
        revoked_at: datetime | None,
    ) -> None:
        self._fetch(
            "upsert_memory_consent",
            {
                "tenant_id": tenant_id,
                "user_id": user_id,
                "purpose": purpose,
                "granted_at": self._ts_in(granted_at),
                "revoked_at": None if revoked_at is None else self._ts_in(revoked_at),
            },
        )

    def has_memory_consent(self, tenant_id: str, user_id: str, purpose: str) -> bool:
        row = self._one("get_memory_consent", tenant_id=tenant_id, user_id=user_id, purpose=purpose)
        return row is not None and row["revoked_at"] is None

    def count_run_memories(self, tenant_id: str, run_id: str) -> int:
        row = self._one("count_run_memories", tenant_id=tenant_id, run_id=run_id)
        return int(row["n"]) if row else 0

    def insert_memory_hold(self, values: MemoryHoldRow) -> None:
        params = dict(values, created_at=self._ts_in(values["created_at"]))
        self._fetch("insert_memory_hold", params)

    def list_memory_holds(self, tenant_id: str) -> list[tuple[str, str]]:
        return [
            (row["scope"], row["scope_id"])
            for row in self._fetch("list_memory_holds", {"tenant_id": tenant_id})
        ]

    def insert_memory_tombstone(self, values: MemoryTombstoneRow) -> None:
        params = dict(values, erased_at=self._ts_in(values["erased_at"]))
        self._fetch("insert_memory_tombstone", params)

    def get_memory_policy(self, tenant_id: str) -> str | None:
        row = self._one("get_memory_policy", tenant_id=tenant_id)
        return None if row is None else str(row["config"])

    def upsert_memory_policy(self, tenant_id: str, config: str, at: datetime, by: str) -> None:
        self._fetch(
            "upsert_memory_policy",
            {
                "tenant_id": tenant_id,
                "config": config,
                "updated_at": self._ts_in(at),
                "updated_by": by,
            },
        )

    def list_memories_due(self, tenant_id: str, *, now: datetime, limit: int) -> list[MemoryRecord]:
        rows = self._fetch(
            "list_memories_due", {"tenant_id": tenant_id, "now": self._ts_in(now), "limit": limit}
        )
        return [self._memory(row) for row in rows]
