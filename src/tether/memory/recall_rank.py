"""What recall ranks a candidate by besides its scores: the share of its text that only
asks, and which part of a memory a hit was found by. See docs/memory.md, "Recall"."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tether.memory.text import tokens

QUESTION_WEIGHT = 0.5
"""How much of a candidate's own relevance a text made only of questions loses: its own
relevance is multiplied by ``1 - QUESTION_WEIGHT * share``, ``share`` being the part of
its sentences that end with a question mark. A question states no fact, yet it shares
the words of a query about its topic and so outranks the turn that answers it (measured
in bench/README.md)."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def question_share(text: str) -> float:
    """The part of ``text``'s sentences that are questions (0.0 to 1.0): those ending with
    a question mark ("?!" too; a question quoted inside a statement does not count)."""
    if "?" not in text:
        return 0.0
    sentences = [part for part in _SENTENCE_END.split(text.strip()) if part]
    asking = sum(1 for part in sentences if part.rstrip("\"')»” !").endswith("?"))
    return asking / len(sentences) if sentences else 0.0


def min_max(scores: dict[str, float]) -> dict[str, float]:
    """Scores scaled to 0..1 between their lowest and highest (all 1.0 when equal)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low < 1e-12:
        return {key: 1.0 for key in scores}
    return {key: (value - low) / (high - low) for key, value in scores.items()}


def matched(why: dict[str, float | str], words: Sequence[str], text: str) -> dict[str, float | str]:
    """``why`` with ``matched``: which part of the memory the query found it by (its text,
    the context it was indexed with, its vector, its episode, the query's date). Words
    are compared by their first five letters, as a stand-in for the index's stemming."""
    parts = []
    if float(why["lexical"]) > 0:
        own = {word[:5] for word in tokens(text)}
        found = [word for word in dict.fromkeys(words) if word[:5] in own]
        parts.append("text: " + ", ".join(found) if found else "context")
    if float(why["vector"]) > 0:
        parts.append("vector")
    if float(why["episode"]) > 0:
        parts.append("episode")
    if "time" in why:
        parts.append("time")
    return {**why, "matched": "; ".join(parts) or "rank only"}
