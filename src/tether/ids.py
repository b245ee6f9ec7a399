"""UUIDv7 ids (time-ordered), from an injectable source.

Python 3.11's ``uuid`` module has no ``uuid7``; this follows RFC 9562: 48 bits of Unix
milliseconds, then a 12-bit counter seeded randomly each millisecond (so ids made in the
same millisecond by one generator still sort in creation order), then 62 random bits.
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from typing import Protocol

from tether.clock import Clock, SystemClock
from tether.errors import InvalidInput


class IdSource(Protocol):
    def new_id(self) -> uuid.UUID: ...


class UUID7Source:
    """Monotonic UUIDv7 generator; thread-safe."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._last_ms = -1
        self._counter = 0

    def new_id(self) -> uuid.UUID:
        with self._lock:
            ms = int(self._clock.now().timestamp() * 1000)
            if ms <= self._last_ms:
                ms = self._last_ms
                self._counter += 1
                if self._counter > 0xFFF:
                    ms += 1
                    self._counter = int.from_bytes(os.urandom(2), "big") & 0x7FF
            else:
                self._counter = int.from_bytes(os.urandom(2), "big") & 0x7FF
            self._last_ms = ms
            counter = self._counter
        tail = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
        value = (ms & ((1 << 48) - 1)) << 80
        value |= 0x7 << 76
        value |= counter << 64
        value |= 0b10 << 62
        value |= tail
        return uuid.UUID(int=value)


_default_source = UUID7Source()


def new_id() -> uuid.UUID:
    """A fresh UUIDv7 from the process-wide generator."""
    return _default_source.new_id()


def parse_id(text: str, *, what: str = "id") -> uuid.UUID:
    """Parse a UUID given by a user, with an error that names what was expected."""
    try:
        return uuid.UUID(str(text))
    except ValueError:
        raise InvalidInput(f"{what} {text!r} is not a valid id (expected a UUID)") from None


_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")


def check_name(value: str, *, what: str) -> str:
    """Validate a user-chosen identifier (tenant, principal): lowercase slug, 1-63 chars."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise InvalidInput(
            f"{what} {value!r} is not valid: use 1-63 lowercase letters, digits, '.', '_' "
            "or '-', starting with a letter or digit"
        )
    return value
