"""Cursor pagination of list endpoints.

A list answers ``{"items": [...], "next_cursor": "..."}``; the next page is asked for
with ``?cursor=<next_cursor>``, and ``next_cursor`` is ``null`` on the last page. A
cursor is opaque to the client (base64url of the last item's sort key): pages never
overlap or skip an item that existed when the first page was read, whatever is added
meanwhile ahead of the cursor.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Generic, TypeVar

from fastapi import Query
from pydantic import BaseModel, Field

from tether.errors import InvalidInput

T = TypeVar("T")
Key = str | int

MAX_PAGE = 500
DEFAULT_PAGE = 50

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description=f"Items per page (1-{MAX_PAGE}).")]
Cursor = Annotated[
    str | None,
    Query(max_length=512, description="`next_cursor` of the previous page; omit for the first."),
]


class Page(BaseModel, Generic[T]):
    """One page of a list."""

    items: list[T]
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page."
    )


def encode_cursor(key: Key) -> str:
    return base64.urlsafe_b64encode(json.dumps([key]).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> Key:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        value = None
    if not (isinstance(value, list) and len(value) == 1 and isinstance(value[0], str | int)):
        raise InvalidInput("cursor is not one this API gave: pass `next_cursor` unchanged")
    key: Key = value[0]
    return key


def after_number(cursor: str | None) -> int:
    """The number a cursor of a numbered list holds: the last number of the previous page
    (turns continue after it, the audit trail, newest first, below it); 0 without a
    cursor."""
    if cursor is None:
        return 0
    key = decode_cursor(cursor)
    if not isinstance(key, int) or key < 0:
        raise InvalidInput("cursor is not one this list gave: pass `next_cursor` unchanged")
    return key


def text_after(cursor: str | None) -> str | None:
    """The id a cursor of a list keyed by id stands after; ``None`` without a cursor."""
    if cursor is None:
        return None
    key = decode_cursor(cursor)
    if not isinstance(key, str):
        raise InvalidInput("cursor is not one this list gave: pass `next_cursor` unchanged")
    return key


def page_of(found: Sequence[T], key: Callable[[T], Key], *, limit: int) -> Page[T]:
    """The page of ``found``: up to ``limit + 1`` items read from storage past the cursor,
    the one beyond ``limit`` only telling that another page follows."""
    page = list(found[:limit])
    more = len(found) > limit
    return Page[T](items=page, next_cursor=encode_cursor(key(page[-1])) if more else None)


def paginate(
    items: Sequence[T],
    key: Callable[[T], Key],
    *,
    cursor: str | None,
    limit: int,
    descending: bool = False,
) -> Page[T]:
    """The page after ``cursor`` of ``items``, which are sorted by ``key`` (ascending, or
    descending if ``descending``)."""
    remaining = list(items)
    if cursor is not None:
        after = decode_cursor(cursor)
        if descending:
            remaining = [item for item in remaining if _before(key(item), after)]
        else:
            remaining = [item for item in remaining if _before(after, key(item))]
    page = remaining[:limit]
    more = len(remaining) > limit
    return Page[T](items=page, next_cursor=encode_cursor(key(page[-1])) if more else None)


def _before(left: Key, right: Key) -> bool:
    if type(left) is not type(right):
        raise InvalidInput("cursor is not one this list gave: pass `next_cursor` unchanged")
    return left < right  # type: ignore[operator]
