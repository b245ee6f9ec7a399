"""Working memory on Redis (``TETHER_REDIS_URL``), with redis-py.

Layout, for tenant ``t`` and session ``s`` (each part percent-encoded, so no id can
reach into another tenant's or session's keys)::

    <prefix>wm:{t:s}:e:<key>   one string per entry, its TTL the entry's TTL
    <prefix>wm:{t:s}:keys      the set of the session's keys, living as long as the
                               longest-living entry

One key per entry gives every entry its own Redis expiry (a hash would expire only as a
whole). The index set lets a session be listed and cleared without scanning the keyspace;
it may briefly name an entry that has already expired, which reads skip and the next
write to the session prunes. Writes that touch both run as one Lua script, so they are
atomic. The braces are a hash tag: a session's keys share one slot.

Expiry is the Redis server's: an entry disappears when the server's clock passes its TTL,
whatever Tether's clock says. ``expires_at`` in results is the remaining TTL added to
Tether's clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

import redis
from redis.commands.core import Script

from tether.clock import Clock
from tether.errors import StorageError, StorageUnavailable
from tether.redaction import redact, url_secrets
from tether.storage.base import WorkingRow

_REFRESH = """
local function refresh(index, base)
  local longest = 0
  for _, member in ipairs(redis.call('SMEMBERS', index)) do
    local ttl = redis.call('PTTL', base .. member)
    if ttl == -2 then
      redis.call('SREM', index, member)
    elseif ttl == -1 then
      longest = -1
    elseif longest ~= -1 and ttl > longest then
      longest = ttl
    end
  end
  if redis.call('SCARD', index) == 0 then
    redis.call('DEL', index)
  elseif longest == -1 then
    redis.call('PERSIST', index)
  else
    redis.call('PEXPIRE', index, math.max(longest, 1))
  end
end
"""

# KEYS: entry, index. ARGV: value, ttl in ms ('' for none), member, entry prefix.
_SET = (
    _REFRESH
    + """
local index_ttl = redis.call('PTTL', KEYS[2])
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
redis.call('SADD', KEYS[2], ARGV[3])
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[2])
elseif index_ttl == -2 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
elseif index_ttl == -1 then
  refresh(KEYS[2], ARGV[4])
elseif index_ttl < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
"""
)

# KEYS: entry, index. ARGV: ttl in ms ('' for none), entry prefix.
_TOUCH = (
    _REFRESH
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if ARGV[1] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
refresh(KEYS[2], ARGV[2])
return 1
"""
)

# KEYS: entry, index. ARGV: member, entry prefix.
_DELETE = (
    _REFRESH
    + """
local removed = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
refresh(KEYS[2], ARGV[2])
return removed
"""
)

# KEYS: index. ARGV: entry prefix.
_CLEAR = """
local removed = 0
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  removed = removed + redis.call('DEL', ARGV[1] .. member)
end
redis.call('DEL', KEYS[1])
return removed
"""

# KEYS: index. ARGV: entry prefix. Returns member, value, pttl for every live entry.
_ENTRIES = """
local found = {}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local key = ARGV[1] .. member
  local value = redis.call('GET', key)
  if value then
    table.insert(found, member)
    table.insert(found, value)
    table.insert(found, redis.call('PTTL', key))
  end
end
return found
"""


def _part(text: str) -> str:
    return quote(text, safe="")


def _ttl_ms(ttl_s: float | None) -> str:
    return "" if ttl_s is None else str(max(1, math.ceil(ttl_s * 1000)))


def display_redis_url(url: str) -> str:
    """The URL with any password replaced, safe to print."""
    return redact(url, url_secrets(url))


class RedisWorkingStore:
    """Working memory in Redis; see the module docstring for the key layout."""

    def __init__(
        self, client: redis.Redis, clock: Clock, *, prefix: str = "tether:", display_url: str
    ) -> None:
        self._client = client
        self._clock = clock
        self.prefix = prefix
        self.display_url = display_url
        self._secrets: list[str] = []
        self._set = client.register_script(_SET)
        self._touch = client.register_script(_TOUCH)
        self._delete = client.register_script(_DELETE)
        self._clear = client.register_script(_CLEAR)
        self._entries = client.register_script(_ENTRIES)

    @classmethod
    def from_url(
        cls, url: str, clock: Clock, *, prefix: str = "tether:", timeout_s: float = 5.0
    ) -> RedisWorkingStore:
        client = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=timeout_s,
            socket_timeout=timeout_s,
        )
        store = cls(client, clock, prefix=prefix, display_url=display_redis_url(url))
        store._secrets = url_secrets(url)
        return store

    def _base(self, tenant_id: str, session_id: str) -> str:
        return f"{self.prefix}wm:{{{_part(tenant_id)}:{_part(session_id)}}}:"

    def _names(self, tenant_id: str, session_id: str, key: str) -> tuple[str, str, str, str]:
        """The entry's Redis key, the index's, the entry's index member, the entry prefix."""
        base = self._base(tenant_id, session_id)
        member = _part(key)
        return f"{base}e:{member}", f"{base}keys", member, f"{base}e:"

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StorageUnavailable(
                f"Redis at {self.display_url} is unavailable: "
                f"{redact(str(exc), self._secrets)}; check TETHER_REDIS_URL"
            ) from exc
        except redis.RedisError as exc:
            raise StorageError(
                f"Redis error at {self.display_url}: {redact(str(exc), self._secrets)}"
            ) from exc

    def _run(self, script: Script, keys: list[str], args: list[str]) -> Any:
        with self._translated():
            return script(keys=keys, args=args)

    def _row(self, key: str, value: str, pttl: int) -> WorkingRow:
        expires = None if pttl < 0 else self._clock.now() + timedelta(milliseconds=pttl)
        return WorkingRow(key=key, value_json=value, expires_at=expires)

    def set(
        self, tenant_id: str, session_id: str, key: str, value_json: str, ttl_s: float | None
    ) -> None:
        entry, index, member, base = self._names(tenant_id, session_id, key)
        self._run(self._set, [entry, index], [value_json, _ttl_ms(ttl_s), member, base])

    def _read(self, entries: list[str], read: Callable[[Any, str], None]) -> list[Any]:
        with self._translated():
            pipe = self._client.pipeline(transaction=True)
            for entry in entries:
                read(pipe, entry)
            return list(pipe.execute())

    def get(self, tenant_id: str, session_id: str, key: str) -> WorkingRow | None:
        return next(iter(self.get_many(tenant_id, session_id, [key])), None)

    def get_many(self, tenant_id: str, session_id: str, keys: Sequence[str]) -> list[WorkingRow]:
        names = [self._names(tenant_id, session_id, key)[0] for key in keys]

        def read(pipe: Any, entry: str) -> None:
            pipe.get(entry)
            pipe.pttl(entry)

        found = self._read(names, read)
        rows = []
        for position, key in enumerate(keys):
            value, pttl = found[2 * position], found[2 * position + 1]
            if value is not None and pttl != -2:
                rows.append(self._row(key, value, int(pttl)))
        return rows

    def entries(self, tenant_id: str, session_id: str) -> list[WorkingRow]:
        base = self._base(tenant_id, session_id)
        flat = self._run(self._entries, [f"{base}keys"], [f"{base}e:"])
        return [
            self._row(unquote(flat[i]), flat[i + 1], int(flat[i + 2]))
            for i in range(0, len(flat), 3)
        ]

    def touch(self, tenant_id: str, session_id: str, key: str, ttl_s: float | None) -> bool:
        entry, index, _, base = self._names(tenant_id, session_id, key)
        return bool(self._run(self._touch, [entry, index], [_ttl_ms(ttl_s), base]))

    def delete(self, tenant_id: str, session_id: str, key: str) -> bool:
        entry, index, member, base = self._names(tenant_id, session_id, key)
        return bool(self._run(self._delete, [entry, index], [member, base]))

    def clear(self, tenant_id: str, session_id: str) -> int:
        base = self._base(tenant_id, session_id)
        return int(self._run(self._clear, [f"{base}keys"], [f"{base}e:"]))

    def purge_expired(self, now: datetime, tenant_id: str | None = None) -> int:
        """Redis deletes expired entries itself; nothing is left to purge."""
        return 0

    def close(self) -> None:
        with self._translated():
            self._client.close()
