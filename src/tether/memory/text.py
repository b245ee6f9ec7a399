"""Words and scope keys: what the near-duplicate check and recall's full-text query see."""

from __future__ import annotations

import re

from tether.memory.models import Scope

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)
_WORD = re.compile(r"\w+", re.UNICODE)


def scope_key(scope: Scope | str, scope_id: str) -> str:
    return f"{Scope(scope).value}:{scope_id}"


def tokens(text: str) -> list[str]:
    """The content words of ``text``: casefolded, without stop words and single letters."""
    return [w for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS and len(w) > 1]
