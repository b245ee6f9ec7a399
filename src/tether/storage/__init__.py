"""Persistence: :func:`open_storage` picks the backend from ``TETHER_URL``.

Services take a :class:`Transaction` (every component's operations), or only the
component protocols they use (:class:`RunStore`, :class:`MemoryStore` …).
"""

from __future__ import annotations

from tether.config import Settings
from tether.errors import ConfigError
from tether.storage.base import (
    CoreStore,
    MemoryStore,
    ProcedureStore,
    RunStore,
    Storage,
    ThreadStore,
    Transaction,
    WorkingStore,
)


def open_storage(settings: Settings, *, create: bool = False) -> Storage:
    """Open the database ``settings.url`` names.

    Args:
        settings: where the database is and how to talk to it.
        create: make an empty SQLite file if none exists (``migrate`` and ``demo`` only).
            PostgreSQL databases are never created; their server must already have one.

    Raises:
        ConfigError: the URL is malformed, or PostgreSQL support is not installed.
        DatabaseMissing: there is no database there and ``create`` is false.
        StorageUnavailable: the database cannot be reached.
    """
    database = settings.database
    if database.backend == "sqlite":
        from tether.storage.sqlite.backend import SQLiteStorage

        return SQLiteStorage(settings, create=create)
    try:
        from tether.storage.postgres.backend import PostgresStorage
    except ImportError as exc:
        raise ConfigError(
            "PostgreSQL support is not installed: pip install 'tether[postgres]'"
        ) from exc
    return PostgresStorage(settings)


__all__ = [
    "CoreStore",
    "MemoryStore",
    "ProcedureStore",
    "RunStore",
    "Storage",
    "ThreadStore",
    "Transaction",
    "WorkingStore",
    "open_storage",
]
