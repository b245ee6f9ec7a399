"""``app.working``: session-scoped key/value state with a time to live.

Working memory is the scratchpad of one session (a conversation thread: the session id is
the thread id): what the agent is in the middle of, not what it has learned. Values are
stored as canonical JSON; an entry may expire, and an expired entry is never returned.
Governed, long-lived knowledge belongs in :mod:`tether.memory` instead.

The values live in a :class:`WorkingStore`: the main database by default, Redis when
``TETHER_REDIS_URL`` is set. Both keep every tenant's entries apart and behave the same
through this class; the one difference is whose clock decides expiry (the injectable
clock on the main database, the Redis server's own clock on Redis).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.clock import Clock
from tether.errors import InvalidInput
from tether.permissions import authorize
from tether.principals import Principal
from tether.storage.base import WorkingRow
from tether.validation import guarded

MAX_ID_CHARS = 256
"""Longest tenant or session id accepted."""
MAX_KEY_CHARS = 512
MAX_VALUE_BYTES = 1_048_576
"""Largest value (as canonical JSON, UTF-8) one entry may hold."""
MAX_TTL_S = 10 * 365 * 86_400
"""Longest time to live: ten years. Longer-lived facts belong in governed memory."""


class WorkingEntry(BaseModel):
    """One live entry of a session."""

    model_config = ConfigDict(frozen=True)

    key: str
    value: Any
    expires_at: datetime | None
    """When the entry stops being visible; ``None``: it stays until deleted."""


class WorkingStore(Protocol):
    """Where working memory lives. Values cross as canonical JSON text.

    Implementations: :class:`~tether.working.sql.SqlWorkingStore` (the main database) and
    :class:`~tether.working.redis_store.RedisWorkingStore`. Every method takes the tenant,
    and no method may return or change another tenant's entries.
    """

    def set(
        self, tenant_id: str, session_id: str, key: str, value_json: str, ttl_s: float | None
    ) -> None: ...

    def get(self, tenant_id: str, session_id: str, key: str) -> WorkingRow | None: ...

    def get_many(
        self, tenant_id: str, session_id: str, keys: Sequence[str]
    ) -> list[WorkingRow]: ...

    def entries(self, tenant_id: str, session_id: str) -> list[WorkingRow]: ...

    def touch(self, tenant_id: str, session_id: str, key: str, ttl_s: float | None) -> bool:
        """Give a live entry a new time to live from now; whether there was one."""
        ...

    def delete(self, tenant_id: str, session_id: str, key: str) -> bool: ...

    def clear(self, tenant_id: str, session_id: str) -> int:
        """Remove every entry of the session, expired ones included; how many were live."""
        ...

    def purge_expired(self, now: datetime, tenant_id: str | None = None) -> int:
        """Delete entries that expired at or before ``now``, in ``tenant_id`` or in every
        tenant."""
        ...

    def close(self) -> None: ...


@guarded
class WorkingMemory:
    """Session-scoped key/value state with an optional time to live per entry.

    Every call takes the acting principal: its tenant is the only one read or written,
    and its roles decide (``working.read``, ``working.write`` in
    :mod:`tether.permissions`). Bad input (an empty key or id, a value that is not JSON, a
    TTL that is not a positive number of seconds) raises
    :class:`~tether.errors.InvalidInput` and changes nothing.

    Example:
        >>> app.working.set(agent, thread_id, "draft", {"step": 2}, ttl_s=3600)
        >>> app.working.get(agent, thread_id, "draft")
        {'step': 2}
    """

    def __init__(self, store: WorkingStore, clock: Clock) -> None:
        self.store = store
        self._clock = clock

    def set(
        self,
        principal: Principal,
        session_id: str,
        key: str,
        value: Any,
        *,
        ttl_s: float | None = None,
    ) -> None:
        """Store ``value`` under ``key``, replacing any earlier value and its expiry.

        ``ttl_s=None`` keeps the entry until it is deleted or its session is cleared.
        """
        authorize(principal, "working.set")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        _check_key(key)
        ttl = _check_ttl(ttl_s)
        self.store.set(tenant_id, session_id, key, _encode(key, value), ttl)

    def get(self, principal: Principal, session_id: str, key: str, default: Any = None) -> Any:
        """The value under ``key``, or ``default`` if there is none or it expired."""
        authorize(principal, "working.get")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        _check_key(key)
        row = self.store.get(tenant_id, session_id, key)
        return default if row is None else canonical.loads(row.value_json)

    def entry(self, principal: Principal, session_id: str, key: str) -> WorkingEntry | None:
        """The live entry under ``key`` with its expiry, or ``None``."""
        authorize(principal, "working.entry")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        _check_key(key)
        row = self.store.get(tenant_id, session_id, key)
        return None if row is None else _entry(row)

    def get_many(
        self, principal: Principal, session_id: str, keys: Iterable[str]
    ) -> dict[str, Any]:
        """The live values among ``keys`` (missing and expired keys are left out)."""
        authorize(principal, "working.get_many")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        wanted = _check_keys(keys)
        if not wanted:
            return {}
        rows = self.store.get_many(tenant_id, session_id, wanted)
        return {row.key: canonical.loads(row.value_json) for row in sorted(rows, key=_by_key)}

    def items(self, principal: Principal, session_id: str) -> dict[str, Any]:
        """Every live ``key: value`` of the session, by key."""
        return {entry.key: entry.value for entry in self.entries(principal, session_id)}

    def entries(self, principal: Principal, session_id: str) -> list[WorkingEntry]:
        """Every live entry of the session with its expiry, by key."""
        authorize(principal, "working.entries")
        return self._entries(principal.tenant_id, session_id)

    def _entries(self, tenant_id: str, session_id: str) -> list[WorkingEntry]:
        _check_ids(tenant_id, session_id)
        rows = self.store.entries(tenant_id, session_id)
        return [_entry(row) for row in sorted(rows, key=_by_key)]

    def keys(self, principal: Principal, session_id: str) -> list[str]:
        """The live keys of the session, sorted."""
        return [entry.key for entry in self.entries(principal, session_id)]

    def touch(
        self, principal: Principal, session_id: str, key: str, *, ttl_s: float | None
    ) -> bool:
        """Extend (or shorten) a live entry's life to ``ttl_s`` from now; ``None`` keeps it
        until deleted. Returns whether there was a live entry to touch."""
        authorize(principal, "working.touch")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        _check_key(key)
        return self.store.touch(tenant_id, session_id, key, _check_ttl(ttl_s))

    def delete(self, principal: Principal, session_id: str, key: str) -> bool:
        """Remove one entry; whether a live one was there."""
        authorize(principal, "working.delete")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        _check_key(key)
        return self.store.delete(tenant_id, session_id, key)

    def clear(self, principal: Principal, session_id: str) -> int:
        """Remove every entry of a session; how many live entries it had."""
        authorize(principal, "working.clear")
        tenant_id = principal.tenant_id
        _check_ids(tenant_id, session_id)
        return self.store.clear(tenant_id, session_id)

    def export_sessions(
        self, principal: Principal, session_ids: Iterable[str]
    ) -> dict[str, list[WorkingEntry]]:
        """The live entries of each session, for a data subject's export.

        Every session asked for is in the result, an empty list when it holds nothing.
        """
        authorize(principal, "working.export_sessions")
        tenant_id = principal.tenant_id
        sessions = _check_sessions(tenant_id, session_ids)
        return {session: self._entries(tenant_id, session) for session in sessions}

    def erase_sessions(self, principal: Principal, session_ids: Iterable[str]) -> int:
        """Remove every entry of each session (expired ones too), for a data subject's
        erasure; how many live entries were removed."""
        authorize(principal, "working.erase_sessions")
        tenant_id = principal.tenant_id
        sessions = _check_sessions(tenant_id, session_ids)
        return sum(self.store.clear(tenant_id, session) for session in sessions)

    def purge_expired(self, now: datetime | None = None, *, tenant_id: str | None = None) -> int:
        """Delete expired entries in every tenant, or in ``tenant_id`` only (maintenance);
        how many.

        Expired entries are invisible from the moment they expire; this frees their space.
        On Redis the server deletes them itself and this returns 0.
        """
        return self.store.purge_expired(now or self._clock.now(), tenant_id)

    def close(self) -> None:
        self.store.close()


def _by_key(row: WorkingRow) -> str:
    return row.key


def _entry(row: WorkingRow) -> WorkingEntry:
    return WorkingEntry(
        key=row.key, value=canonical.loads(row.value_json), expires_at=row.expires_at
    )


def _check_text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string (got {value!r})")
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value)} characters long; at most {limit} are allowed")
    if "\x00" in value:
        raise InvalidInput(f"{what} contains a NUL character")
    return value


def _check_ids(tenant_id: object, session_id: object) -> None:
    _check_text(tenant_id, "tenant id", MAX_ID_CHARS)
    _check_text(session_id, "working-memory session id", MAX_ID_CHARS)


def _check_key(key: object) -> None:
    _check_text(key, "working-memory key", MAX_KEY_CHARS)


def _check_keys(keys: Iterable[str]) -> list[str]:
    if isinstance(keys, str):
        raise InvalidInput("keys must be a list of keys, not one string")
    wanted = list(dict.fromkeys(keys))
    for key in wanted:
        _check_key(key)
    return wanted


def _check_sessions(tenant_id: str, session_ids: Iterable[str]) -> list[str]:
    if isinstance(session_ids, str):
        raise InvalidInput("session_ids must be a list of session ids, not one string")
    sessions = list(dict.fromkeys(session_ids))
    for session in sessions:
        _check_ids(tenant_id, session)
    if not sessions:
        _check_text(tenant_id, "tenant id", MAX_ID_CHARS)
    return sessions


def _check_ttl(ttl_s: object) -> float | None:
    if ttl_s is None:
        return None
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)):
        raise InvalidInput(f"ttl_s must be a number of seconds or None (got {ttl_s!r})")
    if not math.isfinite(ttl_s) or ttl_s <= 0:
        raise InvalidInput(
            f"ttl_s must be a positive number of seconds (got {ttl_s!r}); "
            "to remove an entry, delete it"
        )
    if ttl_s > MAX_TTL_S:
        raise InvalidInput(
            f"ttl_s {ttl_s!r} is over {MAX_TTL_S} seconds (ten years); use ttl_s=None to keep "
            "the entry until deleted"
        )
    return float(ttl_s)


def _encode(key: str, value: Any) -> str:
    try:
        text = canonical.dumps(value)
    except InvalidInput as exc:
        raise InvalidInput(f"working-memory value of {key!r}: {exc.message}") from None
    size = len(text.encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        raise InvalidInput(
            f"working-memory value of {key!r} is {size} bytes as JSON; at most "
            f"{MAX_VALUE_BYTES} are allowed"
        )
    return text
