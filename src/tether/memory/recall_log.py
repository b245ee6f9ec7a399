"""The recall log's buffer: who recalled what, and each memory's access count.

Recall buffers a log row per recall and a count per memory it returned, and writes them
together every ``log_every`` recalls or ``flush_every`` hits (one transaction per tenant),
so a recall costs no write of its own. A process that stops without :meth:`flush` loses
at most that many rows and counts; a flush that fails (a storage fault) puts what it did
not write back in the buffer for the next one.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from tether.clock import Clock
from tether.storage.base import MemoryRecallRow, Storage

_Unwritten = Sequence[tuple[str, tuple[list[MemoryRecallRow], dict[str, int]]]]


class RecallLog:
    """The buffer of one database's recalls (thread-safe)."""

    def __init__(self, storage: Storage, clock: Clock) -> None:
        self._storage = storage
        self._clock = clock
        self._lock = threading.Lock()
        self._access: Counter[tuple[str, str]] = Counter()
        self._rows: list[MemoryRecallRow] = []
        self.flush_every = 200
        self.log_every = 20

    def add(self, row: MemoryRecallRow, hits: list[tuple[str, str]]) -> None:
        """Buffer a recall's log row and its access counts (``(tenant, memory_id)`` per
        hit); write both once ``log_every`` recalls or ``flush_every`` hits wait."""
        with self._lock:
            self._rows.append(row)
            for tenant, memory_id in hits:
                self._access[(tenant, memory_id)] += 1
            due = len(self._rows) >= self.log_every or sum(self._access.values()) >= (
                self.flush_every
            )
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the buffered log rows and access counts, one transaction per tenant."""
        with self._lock:
            pending, self._access = self._access, Counter()
            logged, self._rows = self._rows, []
        by_tenant: dict[str, tuple[list[MemoryRecallRow], dict[str, int]]] = {}
        for row in logged:
            by_tenant.setdefault(row["tenant_id"], ([], {}))[0].append(row)
        for (tenant, memory_id), hits in pending.items():
            by_tenant.setdefault(tenant, ([], {}))[1][memory_id] = hits
        now = self._clock.now()
        left = list(by_tenant.items())
        while left:
            tenant, (rows, counts) = left[0]
            try:
                with self._storage.transaction(tenant) as txn:
                    txn.insert_memory_recalls(rows)
                    if counts:
                        txn.bump_memory_access(tenant, counts, now)
            except BaseException:
                self._keep(left)
                raise
            left.pop(0)

    def _keep(self, unwritten: _Unwritten) -> None:
        """Put back in front of the buffers what a failed :meth:`flush` did not write."""
        with self._lock:
            for tenant, (rows, counts) in reversed(unwritten):
                self._rows[:0] = rows
                for memory_id, hits in counts.items():
                    self._access[(tenant, memory_id)] += hits
