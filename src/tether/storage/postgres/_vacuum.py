"""Rewriting tables with ``VACUUM FULL`` until no erased row version is left in them."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from tether.errors import StorageUnavailable

_KEPT_DEAD = re.compile(r"(\d+) dead row versions cannot be removed yet")

REWRITE_DEADLINE_S = 30.0
"""How long a rewrite waits for the transactions that still see erased rows to end."""


def rewrite_until_clean(conn: psycopg.Connection[Any], tables: Sequence[str]) -> None:
    """``VACUUM (FULL, VERBOSE)`` each table, again until no pass had to keep a dead row
    version (another transaction could still see it, so VACUUM copied it).

    Raises:
        StorageUnavailable: a transaction still sees the erased rows after
            :data:`REWRITE_DEADLINE_S`.
    """
    deadline = time.monotonic() + REWRITE_DEADLINE_S
    kept: list[int] = []

    def count_kept(notice: psycopg.errors.Diagnostic) -> None:
        found = _KEPT_DEAD.search(notice.message_detail or "")
        if found:
            kept.append(int(found.group(1)))

    conn.add_notice_handler(count_kept)
    try:
        while True:
            kept.clear()
            for table in tables:
                conn.execute(f"VACUUM (FULL, VERBOSE) {table}")
            if not any(kept):
                return
            if time.monotonic() >= deadline:
                raise StorageUnavailable(
                    "the erasure is committed, but a long-running transaction still sees "
                    "the erased rows, so their bytes remain; end it and run the erasure again"
                )
            time.sleep(0.2)
    finally:
        conn.remove_notice_handler(count_kept)
