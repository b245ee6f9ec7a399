"""Working memory: session-scoped key/value state with a time to live (``app.working``).

Public names load their submodule on first use (see :mod:`tether._exports`). The Redis
store is not among them: it needs the ``redis`` extra, and :func:`open_working` picks it
when ``TETHER_REDIS_URL`` is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.working.open import open_working
    from tether.working.service import WorkingEntry, WorkingMemory, WorkingStore
    from tether.working.sql import SqlWorkingStore

_EXPORTS = {
    "WorkingEntry": "tether.working.service",
    "WorkingMemory": "tether.working.service",
    "WorkingStore": "tether.working.service",
    "SqlWorkingStore": "tether.working.sql",
    "open_working": "tether.working.open",
}

__all__ = [
    "SqlWorkingStore",
    "WorkingEntry",
    "WorkingMemory",
    "WorkingStore",
    "open_working",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
