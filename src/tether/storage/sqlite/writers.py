"""One writer at a time per database file within this process, in turn.

SQLite lets one transaction write at a time; a writer that finds the file locked sleeps
in its busy handler (1, 2, 5, 10 ... up to 100 ms between tries) and may lose every race
to writers that arrive later, so under many threads one can starve past the busy
timeout. Threads of one process that write the same file take a lock here first, which
hands the file over as soon as the writer before them commits; the busy handler is left
to arbitrate between processes.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_guard = threading.Lock()
_locks: dict[str, threading.Lock] = {}


def writer_lock(path: Path) -> threading.Lock:
    """The lock of the database file at ``path`` (one per file, shared by every storage
    of this process that opens it)."""
    key = os.path.realpath(path)
    with _guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.Lock()
        return lock


def _forget_in_child() -> None:
    """A forked child starts with fresh locks: one held by another thread of the parent
    at the fork would never be released in the child."""
    global _guard
    _guard = threading.Lock()
    _locks.clear()


os.register_at_fork(after_in_child=_forget_in_child)
