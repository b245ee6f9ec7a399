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
    from tether.threads.summarize import (
        ChatCompletionsSummarizer,
        ExtractiveSummarizer,
        Summarizer,
    )
    from tether.threads.tokens import ApproximateCounter, TokenCounter, WordPieceCounter

_EXPORTS = {
    "Threads": "tether.threads.service",
    "ChatCompletionsSummarizer": "tether.threads.summarize",
    "ExtractiveSummarizer": "tether.threads.summarize",
    "Summarizer": "tether.threads.summarize",
    "ApproximateCounter": "tether.threads.tokens",
    "TokenCounter": "tether.threads.tokens",
    "WordPieceCounter": "tether.threads.tokens",
}

__all__ = [
    "ApproximateCounter",
    "ChatCompletionsSummarizer",
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
    "WordPieceCounter",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
