"""Which store holds working memory: Redis when it is configured, else the main database."""

from __future__ import annotations

from tether.clock import Clock
from tether.config import Settings
from tether.errors import ConfigError
from tether.storage.base import Storage
from tether.working.service import WorkingMemory
from tether.working.sql import SqlWorkingStore


def open_working(settings: Settings, storage: Storage, clock: Clock) -> WorkingMemory:
    """Working memory on Redis when ``TETHER_REDIS_URL`` is set, else in ``storage``.

    Raises:
        ConfigError: Redis is configured but the ``redis`` extra is not installed.
    """
    if settings.redis_url is None:
        return WorkingMemory(SqlWorkingStore(storage, clock), clock)
    try:
        from tether.working.redis_store import RedisWorkingStore
    except ImportError as exc:
        raise ConfigError(
            "TETHER_REDIS_URL is set but the redis package is not installed: "
            "pip install 'tether[redis]'"
        ) from exc
    try:
        store = RedisWorkingStore.from_url(
            settings.redis_url.get_secret_value().strip(), clock, prefix=settings.redis_prefix
        )
    except ValueError as exc:
        raise ConfigError(f"TETHER_REDIS_URL is not a valid Redis URL: {exc}") from None
    return WorkingMemory(store, clock)
