"""Wake-ups of idle workers on PostgreSQL: ``LISTEN tether_runs``."""

from __future__ import annotations

import time
from typing import Any

import psycopg

from tether.redaction import get_logger

log = get_logger("tether.storage")


class PostgresWakeups:
    """Wakes an idle worker on ``NOTIFY tether_runs`` (sent at commit by runs 0004's
    triggers), on a connection of its own outside the pool.

    A lost connection is opened again on the next wait, which then returns at once: what
    was notified meanwhile is lost, so the worker looks for work.
    """

    def __init__(self, conninfo: str, listen: str, connect_timeout: int) -> None:
        self._conninfo = conninfo
        self._listen = listen
        self._timeout = connect_timeout
        self._conn: psycopg.Connection[Any] | None = None

    def wait(self, timeout_s: float) -> bool:
        started = time.monotonic()
        try:
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(
                    self._conninfo, autocommit=True, connect_timeout=self._timeout
                )
                self._conn.execute(self._listen)
                return True
            if not list(self._conn.notifies(timeout=timeout_s, stop_after=1)):
                return False
            # One look for work answers every notification already here.
            list(self._conn.notifies(timeout=0))
            return True
        except psycopg.Error:
            log.debug("the wake-up connection failed; polling instead", exc_info=True)
            self.close()
            time.sleep(max(0.0, timeout_s - (time.monotonic() - started)))
            return True

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            conn.close()
