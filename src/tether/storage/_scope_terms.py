"""Each (tenant, scope)'s token, and memory text as a full-text index stores it.

A backend with its own full-text index (SQLite's FTS5) puts the token in front of every
word it indexes, so each scope has terms of its own; the token also names a scope in the
count of its vector writes.
"""

from __future__ import annotations

import hashlib
import re

_CONSONANTS = "bcdfghjklmnpqrstvwxz"
SCOPE_PREFIX_LENGTH = 12
_INDEXED_WORD = re.compile(r"[^\W_]+")


def scope_token(tenant_id: str, scope: str) -> str:
    """A prefix of :data:`SCOPE_PREFIX_LENGTH` letters per (tenant, scope) that a backend
    with its own full-text index (SQLite's FTS5) puts in front of every indexed word, so
    each scope has its own terms.

    A search then reads only its scope's posting lists, and bm25's document frequencies
    are the scope's own: no pass over a whole scope to count a scope-wide token. The
    prefix is consonants only (no ``y``), so the Porter stemmer measures the word exactly
    as it would without it. Two scopes sharing a prefix (a 1 in 4e15 chance per pair)
    would only share term statistics: every search re-checks tenant and scope.
    """
    digest = hashlib.sha256(f"{tenant_id}\x00{scope}".encode()).digest()
    number = int.from_bytes(digest[:8], "big")
    letters = []
    for _ in range(SCOPE_PREFIX_LENGTH):
        number, digit = divmod(number, len(_CONSONANTS))
        letters.append(_CONSONANTS[digit])
    return "".join(letters)


def scoped_terms(prefix: str, text: str) -> str:
    """``text`` as the full-text index stores it: each word (letters and digits, as the
    unicode61 tokenizer splits them) behind the scope's prefix."""
    return " ".join(prefix + word for word in _INDEXED_WORD.findall(text))
