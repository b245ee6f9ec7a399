"""Conversation threads: turns stored once, in order, with summaries beside them.

The models load with the package; the service, summarizers and token counters load on
first use (see :mod:`tether._exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports
from tether.threads.models import NewTurn, Summary, Thread, Turn, TurnKind, TurnRole

if TYPE_CHECKING:
    from tether.threads.service import Threads
    from tether.threads.summarize import ExtractiveSummarizer, Summarizer
    from tether.threads.tokens import TokenCounter

_EXPORTS = {
    "Threads": "tether.threads.service",
    "ExtractiveSummarizer": "tether.threads.summarize",
    "Summarizer": "tether.threads.summarize",
    "TokenCounter": "tether.threads.tokens",
}

__all__ = [
    "ExtractiveSummarizer",
    "NewTurn",
    "Summarizer",
    "Summary",
    "Thread",
    "Threads",
    "TokenCounter",
    "Turn",
    "TurnKind",
    "TurnRole",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
