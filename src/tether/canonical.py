"""Canonical JSON: the one encoding for everything stored or digested.

Sorted keys, no insignificant whitespace, UTF-8, no NaN or infinities, timestamps in one
text form. Two equal values always encode to the same bytes, so digests do not change
when a library upgrade reorders a dict. Only JSON-native types, datetimes, UUIDs, enums
and pydantic models are accepted: nothing is ever pickled.
"""

from __future__ import annotations

import enum
import hashlib
import json
import uuid
from _json import make_encoder
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any

from pydantic import BaseModel

from tether.clock import format_timestamp
from tether.errors import InvalidInput
from tether.validation import check_value


def _default(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, tuple):
        return list(value)
    raise InvalidInput(
        f"cannot store a value of type {type(value).__name__} as JSON: use JSON types, "
        "datetimes, UUIDs, enums or pydantic models"
    )


_ENCODE = make_encoder(
    None,  # no check for circular references: see below
    _default,
    encode_basestring,  # ensure_ascii=False
    None,  # no indent
    ":",
    ",",
    True,  # sort_keys
    False,  # skipkeys
    False,  # allow_nan
)
"""The C encoder that ``json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)`` uses, made once (``json`` makes one per call).
It does not look for circular references: untrusted values pass ``check_value`` first,
whose bound on nesting refuses a cycle, and Tether's own values have none."""


def dumps(value: Any, *, trusted: bool = False) -> str:
    """Encode ``value`` as canonical JSON text.

    ``trusted`` skips the walk that refuses non-string keys, for values Tether built
    itself with string keys (model dumps in JSON mode, its own bookkeeping).
    Untrusted values pass :func:`tether.validation.check_value` first: no NaN or
    infinity, no lone surrogates or NUL, integers within 64 bits, string keys, bounded
    nesting; so what one backend stores the other would store the same.
    """
    if not trusted:
        check_value("value", value)
    try:
        return "".join(_ENCODE(value, 0))
    except (ValueError, TypeError, RecursionError) as exc:
        raise InvalidInput(f"cannot encode as JSON: {exc}") from exc


def loads(text: str | bytes) -> Any:
    return json.loads(text)


def digest(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``value``."""
    return hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()
