"""Waking an idle worker on SQLite when another connection commits."""

from __future__ import annotations

import sqlite3
import time
from contextlib import suppress
from pathlib import Path

WAKEUP_CHECK_S = 0.005
"""How often an idle worker on SQLite checks whether another connection committed."""


class SQLiteWakeups:
    """Wakes an idle worker when another connection (any thread, any process) commits.

    SQLite has no notifications between processes, so this reads ``PRAGMA data_version``
    every :data:`WAKEUP_CHECK_S`: it changes when another connection commits and costs a
    read of the WAL index in shared memory, no disk I/O. Any commit wakes the worker (a
    step of another run as well as a new run or an answer); it then looks for work once.
    """

    def __init__(self, path: Path, query: str) -> None:
        self._path = path
        self._query = query
        self._conn: sqlite3.Connection | None = None
        self._version: int | None = None

    def _read(self) -> int:
        if self._conn is None:
            self._conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        return int(self._conn.execute(self._query).fetchone()[0])

    def wait(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        try:
            if self._version is None:
                self._version = self._read()
            while True:
                version = self._read()
                if version != self._version:
                    self._version = version
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                time.sleep(min(WAKEUP_CHECK_S, left))
        except sqlite3.Error:
            self.close()
            time.sleep(max(0.0, deadline - time.monotonic()))
            return True

    def close(self) -> None:
        conn, self._conn, self._version = self._conn, None, None
        if conn is not None:
            with suppress(sqlite3.Error):
                conn.close()
