"""Policy patterns (``op: matches``) on RE2, whose matching time is linear in the input.

A backtracking engine (Python's ``re``) can take exponential time on a pattern such as
``([a-z0-9]+[.-]?)+@x`` and an input an agent chooses, and so hang the worker that checks
an effect. RE2 cannot: it refuses what it cannot run in linear time (backreferences,
lookarounds), so such a pattern is refused when the procedure file is loaded, with the
file and field named, never at match time.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


def _reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """The compiled pattern, or ``ValueError`` saying why RE2 cannot run it."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise ValueError(
            f"op matches: the linear-time engine (RE2) cannot run this pattern: "
            f"{_reason(exc)} (lookarounds, backreferences and repetitions over 1000 are "
            "not supported)"
        ) from None


def full_match(pattern: str, value: str) -> bool:
    """Whether ``pattern`` matches all of ``value``."""
    try:
        return compile_pattern(pattern).fullmatch(value) is not None
    except UnicodeEncodeError:
        return False
