"""Typed storage operations of conversation threads, written once over named queries."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tether import canonical
from tether.storage._transaction import QueryTransaction, Row
from tether.threads.models import Summary, Thread, Turn, TurnKind, TurnRole


class ThreadOps(QueryTransaction):
    @abstractmethod
    def _fetch_many(self, name: str, params: Sequence[Mapping[str, Any]]) -> None: ...

    def _optional_ts(self, value: Any) -> datetime | None:
        return None if value is None else self._ts_out(value)

    def _thread(self, row: Row) -> Thread:
        return Thread.model_construct(
            tenant_id=row["tenant_id"],
            thread_id=row["thread_id"],
            user_id=row["user_id"],
            title=row["title"],
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
            updated_at=self._ts_out(row["updated_at"]),
            last_turn_seq=int(row["last_turn_seq"]),
            retention_days=None if row["retention_days"] is None else int(row["retention_days"]),
            expires_at=self._optional_ts(row["expires_at"]),
        )

    def _turn(self, row: Row) -> Turn:
        # Rows Tether wrote itself: built without re-validation (a context reads many).
        return Turn.model_construct(
            tenant_id=row["tenant_id"],
            thread_id=row["thread_id"],
            seq=int(row["seq"]),
            turn_id=row["turn_id"],
            role=TurnRole(row["role"]),
            kind=TurnKind(row["kind"]),
            content=row["content"],
            tokens=int(row["tokens"]),
            ref=row["ref"],
            metadata=canonical.loads(row["metadata"]),
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
        )

    def _summary(self, row: Row) -> Summary:
        return Summary.model_construct(
            tenant_id=row["tenant_id"],
            thread_id=row["thread_id"],
            summary_id=row["summary_id"],
            from_seq=int(row["from_seq"]),
            to_seq=int(row["to_seq"]),
            text=row["text"],
            tokens=int(row["tokens"]),
            dropped_refs=canonical.loads(row["dropped_refs"]),
            summarizer=row["summarizer"],
            created_at=self._ts_out(row["created_at"]),
            created_by=row["created_by"],
        )

    def insert_thread(self, thread: Thread) -> None:
        self._fetch(
            "insert_thread",
            {
                "tenant_id": thread.tenant_id,
                "thread_id": thread.thread_id,
                "user_id": thread.user_id,
                "title": thread.title,
                "created_at": self._ts_in(thread.created_at),
                "created_by": thread.created_by,
                "updated_at": self._ts_in(thread.updated_at),
                "last_turn_seq": thread.last_turn_seq,
                "retention_days": thread.retention_days,
                "expires_at": None if thread.expires_at is None else self._ts_in(thread.expires_at),
            },
        )

    def get_thread(self, tenant_id: str, thread_id: str) -> Thread | None:
        row = self._one("get_thread", tenant_id=tenant_id, thread_id=thread_id)
        return self._thread(row) if row else None

    def list_threads(
        self, tenant_id: str, *, user_id: str | None = None, limit: int = 100
    ) -> list[Thread]:
        if user_id is None:
            rows = self._fetch("list_threads", {"tenant_id": tenant_id, "limit": limit})
        else:
            rows = self._fetch(
                "list_user_threads", {"tenant_id": tenant_id, "user_id": user_id, "limit": limit}
            )
        return [self._thread(row) for row in rows]

    def list_expired_threads(self, tenant_id: str, *, now: datetime, limit: int) -> list[Thread]:
        rows = self._fetch(
            "list_expired_threads",
            {"tenant_id": tenant_id, "now": self._ts_in(now), "limit": limit},
        )
        return [self._thread(row) for row in rows]

    def advance_thread(
        self,
        tenant_id: str,
        thread_id: str,
        *,
        count: int,
        updated_at: datetime,
        expires_at: datetime | None,
    ) -> int | None:
        row = self._one(
            "advance_thread",
            tenant_id=tenant_id,
            thread_id=thread_id,
            count=count,
            updated_at=self._ts_in(updated_at),
            expires_at=None if expires_at is None else self._ts_in(expires_at),
        )
        return None if row is None else int(row["last_turn_seq"])

    def insert_thread_turns(self, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        self._fetch_many(
            "insert_thread_turn",
            [
                {
                    "tenant_id": turn.tenant_id,
                    "thread_id": turn.thread_id,
                    "seq": turn.seq,
                    "turn_id": turn.turn_id,
                    "role": turn.role.value,
                    "kind": turn.kind.value,
                    "content": turn.content,
                    "tokens": turn.tokens,
                    "ref": turn.ref,
                    "metadata": canonical.dumps(turn.metadata),
                    "created_at": self._ts_in(turn.created_at),
                    "created_by": turn.created_by,
                }
                for turn in turns
            ],
        )

    def list_thread_turns(
        self, tenant_id: str, thread_id: str, *, from_seq: int, to_seq: int, limit: int
    ) -> list[Turn]:
        rows = self._fetch(
            "list_thread_turns",
            {
                "tenant_id": tenant_id,
                "thread_id": thread_id,
                "from_seq": from_seq,
                "to_seq": to_seq,
                "limit": limit,
            },
        )
        return [self._turn(row) for row in rows]

    def list_thread_turns_before(
        self, tenant_id: str, thread_id: str, *, before_seq: int, limit: int
    ) -> list[Turn]:
        rows = self._fetch(
            "list_thread_turns_before",
            {
                "tenant_id": tenant_id,
                "thread_id": thread_id,
                "before_seq": before_seq,
                "limit": limit,
            },
        )
        return [self._turn(row) for row in rows]

    def get_thread_turn(self, tenant_id: str, turn_id: str) -> Turn | None:
        row = self._one("get_thread_turn", tenant_id=tenant_id, turn_id=turn_id)
        return self._turn(row) if row else None

    def list_thread_turns_by_ref(self, tenant_id: str, thread_id: str, ref: str) -> list[Turn]:
        rows = self._fetch(
            "list_thread_turns_by_ref", {"tenant_id": tenant_id, "thread_id": thread_id, "ref": ref}
        )
        return [self._turn(row) for row in rows]

    def insert_thread_summary(self, summary: Summary) -> None:
        self._fetch(
            "insert_thread_summary",
            {
                "tenant_id": summary.tenant_id,
                "thread_id": summary.thread_id,
                "summary_id": summary.summary_id,
                "from_seq": summary.from_seq,
                "to_seq": summary.to_seq,
                "text": summary.text,
                "tokens": summary.tokens,
                "dropped_refs": canonical.dumps(summary.dropped_refs),
                "summarizer": summary.summarizer,
                "created_at": self._ts_in(summary.created_at),
                "created_by": summary.created_by,
            },
        )

    def list_thread_summaries(self, tenant_id: str, thread_id: str) -> list[Summary]:
        rows = self._fetch(
            "list_thread_summaries", {"tenant_id": tenant_id, "thread_id": thread_id}
        )
        return [self._summary(row) for row in rows]

    def latest_thread_summary(self, tenant_id: str, thread_id: str) -> Summary | None:
        row = self._one("latest_thread_summary", tenant_id=tenant_id, thread_id=thread_id)
        return self._summary(row) if row else None

    def delete_thread(self, tenant_id: str, thread_id: str) -> tuple[int, int]:
        """Delete a thread with its turns and summaries; (turns, summaries) removed."""
        key = {"tenant_id": tenant_id, "thread_id": thread_id}
        summaries = len(self._fetch("delete_thread_summaries", key))
        turns = len(self._fetch("delete_thread_turns", key))
        self._fetch("delete_thread", key)
        return turns, summaries
