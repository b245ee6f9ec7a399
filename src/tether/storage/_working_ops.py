"""Typed storage operations of working memory, written once over named queries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tether.storage._transaction import QueryTransaction, Row
from tether.storage.rows import WorkingRow


class WorkingOps(QueryTransaction):
    def _working_row(self, row: Row) -> WorkingRow:
        expires = row["expires_at"]
        return WorkingRow(
            key=row["key"],
            value_json=row["value"],
            expires_at=None if expires is None else self._ts_out(expires),
        )

    def _live(self, rows: list[Row], now: datetime) -> int:
        """How many of the deleted rows (``expires_at`` only) had not expired yet."""
        return sum(
            1 for row in rows if row["expires_at"] is None or self._ts_out(row["expires_at"]) > now
        )

    def _expiry_in(self, expires_at: datetime | None) -> Any:
        return None if expires_at is None else self._ts_in(expires_at)

    def upsert_working_entry(
        self,
        tenant_id: str,
        session_id: str,
        key: str,
        value_json: str,
        *,
        expires_at: datetime | None,
        now: datetime,
    ) -> None:
        self._fetch(
            "upsert_working_entry",
            {
                "tenant_id": tenant_id,
                "session_id": session_id,
                "key": key,
                "value": value_json,
                "expires_at": self._expiry_in(expires_at),
                "now": self._ts_in(now),
            },
        )

    def get_working_entry(
        self, tenant_id: str, session_id: str, key: str, *, now: datetime
    ) -> WorkingRow | None:
        row = self._one(
            "get_working_entry",
            tenant_id=tenant_id,
            session_id=session_id,
            key=key,
            now=self._ts_in(now),
        )
        return self._working_row(row) if row else None

    def list_working_entries(
        self, tenant_id: str, session_id: str, *, now: datetime
    ) -> list[WorkingRow]:
        rows = self._fetch(
            "list_working_entries",
            {"tenant_id": tenant_id, "session_id": session_id, "now": self._ts_in(now)},
        )
        return [self._working_row(row) for row in rows]

    def touch_working_entry(
        self,
        tenant_id: str,
        session_id: str,
        key: str,
        *,
        expires_at: datetime | None,
        now: datetime,
    ) -> bool:
        rows = self._fetch(
            "touch_working_entry",
            {
                "tenant_id": tenant_id,
                "session_id": session_id,
                "key": key,
                "expires_at": self._expiry_in(expires_at),
                "now": self._ts_in(now),
            },
        )
        return bool(rows)

    def delete_working_entry(
        self, tenant_id: str, session_id: str, key: str, *, now: datetime
    ) -> bool:
        rows = self._fetch(
            "delete_working_entry", {"tenant_id": tenant_id, "session_id": session_id, "key": key}
        )
        return self._live(rows, now) > 0

    def delete_working_session(self, tenant_id: str, session_id: str, *, now: datetime) -> int:
        rows = self._fetch(
            "delete_working_session", {"tenant_id": tenant_id, "session_id": session_id}
        )
        return self._live(rows, now)

    def purge_expired_working_entries(self, *, now: datetime, tenant_id: str | None = None) -> int:
        if tenant_id is None:
            return len(self._fetch("purge_expired_working_entries", {"now": self._ts_in(now)}))
        params = {"now": self._ts_in(now), "tenant_id": tenant_id}
        return len(self._fetch("purge_expired_working_entries_of", params))
