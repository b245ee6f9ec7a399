"""Working memory in the main database (SQLite or PostgreSQL): the default store.

Each call is one short transaction confined to the tenant (on PostgreSQL, row-level
security checks the tenant again). Expiry is decided by the injectable clock: an entry
whose ``expires_at`` is at or before now is filtered out by every read, and
:meth:`purge_expired` deletes it later.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tether.clock import Clock
from tether.storage.base import Storage, WorkingRow


class SqlWorkingStore:
    def __init__(self, storage: Storage, clock: Clock) -> None:
        self._storage = storage
        self._clock = clock

    def _expiry(self, now: datetime, ttl_s: float | None) -> datetime | None:
        return None if ttl_s is None else now + timedelta(seconds=ttl_s)

    def set(
        self, tenant_id: str, session_id: str, key: str, value_json: str, ttl_s: float | None
    ) -> None:
        now = self._clock.now()
        with self._storage.transaction(tenant_id) as txn:
            txn.upsert_working_entry(
                tenant_id,
                session_id,
                key,
                value_json,
                expires_at=self._expiry(now, ttl_s),
                now=now,
            )

    def get(self, tenant_id: str, session_id: str, key: str) -> WorkingRow | None:
        with self._storage.transaction(tenant_id, write=False) as txn:
            return txn.get_working_entry(tenant_id, session_id, key, now=self._clock.now())

    def get_many(self, tenant_id: str, session_id: str, keys: Sequence[str]) -> list[WorkingRow]:
        now = self._clock.now()
        with self._storage.transaction(tenant_id, write=False) as txn:
            rows = [txn.get_working_entry(tenant_id, session_id, key, now=now) for key in keys]
        return [row for row in rows if row is not None]

    def entries(self, tenant_id: str, session_id: str) -> list[WorkingRow]:
        with self._storage.transaction(tenant_id, write=False) as txn:
            return txn.list_working_entries(tenant_id, session_id, now=self._clock.now())

    def touch(self, tenant_id: str, session_id: str, key: str, ttl_s: float | None) -> bool:
        now = self._clock.now()
        with self._storage.transaction(tenant_id) as txn:
            return txn.touch_working_entry(
                tenant_id, session_id, key, expires_at=self._expiry(now, ttl_s), now=now
            )

    def delete(self, tenant_id: str, session_id: str, key: str) -> bool:
        with self._storage.transaction(tenant_id) as txn:
            return txn.delete_working_entry(tenant_id, session_id, key, now=self._clock.now())

    def clear(self, tenant_id: str, session_id: str) -> int:
        with self._storage.transaction(tenant_id) as txn:
            return txn.delete_working_session(tenant_id, session_id, now=self._clock.now())

    def purge_expired(self, now: datetime, tenant_id: str | None = None) -> int:
        if tenant_id is None:
            with self._storage.system_transaction() as txn:
                return txn.purge_expired_working_entries(now=now)
        with self._storage.transaction(tenant_id) as txn:
            return txn.purge_expired_working_entries(now=now, tenant_id=tenant_id)

    def close(self) -> None:
        """The main database is closed with the app."""
