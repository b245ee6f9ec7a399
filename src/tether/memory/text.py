"""Words and scope keys: what the near-duplicate check and recall's full-text query see."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from tether.errors import InvalidInput
from tether.memory.models import Scope
from tether.principals import GLOBAL_TENANT

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


def parse_scope(value: str) -> tuple[Scope, str]:
    """``kind:id`` (``user:u-1``, ``case:C-1001``) as a scope and its id; anything else is
    :class:`InvalidInput` naming the valid kinds."""
    kind, _, scope_id = value.partition(":")
    try:
        scope = Scope(kind)
    except ValueError:
        valid = ", ".join(s.value for s in Scope)
        raise InvalidInput(f"scope {value!r}: use kind:id with kind one of {valid}") from None
    if not scope_id:
        raise InvalidInput(f"scope {value!r} has no id: use kind:id, e.g. user:u-1")
    return scope, scope_id


def scope_keys_by_owner(tenant_id: str, keys: Iterable[str]) -> dict[str, list[str]]:
    """Scope keys grouped by the tenant that holds them: a ``global`` scope's memories are
    in the reserved tenant :data:`GLOBAL_TENANT`, every other scope's in ``tenant_id``."""
    owners: dict[str, list[str]] = {}
    for key in keys:
        owner = GLOBAL_TENANT if key.startswith(f"{Scope.GLOBAL.value}:") else tenant_id
        owners.setdefault(owner, []).append(key)
    return owners


def tokens(text: str) -> list[str]:
    """The content words of ``text``: casefolded, without stop words and single letters."""
    return [w for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS and len(w) > 1]


MAX_PARTS = 8
"""The most sentence vectors a memory gets; later sentences join the last part."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The sentences of a memory of two or more (at most :data:`MAX_PARTS`, the rest
    joined to the last); an empty list for a memory of one sentence."""
    parts = [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]
    if len(parts) < 2:
        return []
    if len(parts) > MAX_PARTS:
        parts = [*parts[: MAX_PARTS - 1], " ".join(parts[MAX_PARTS - 1 :])]
    return parts


def event_terms(moment: datetime) -> str:
    """The words a memory's event time is indexed under: day, month and year, so a query
    naming the date or the month finds it ("8 May 2023", "May 2023")."""
    return f"{moment.day} {moment:%B %Y}"
