"""Injectable time, so tests can drive days of waiting in milliseconds."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that moves only when told to; thread-safe."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2030, 1, 1, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("FakeClock needs a timezone-aware start time")
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | float) -> datetime:
        """Move forward by ``delta`` (a timedelta or seconds) and return the new time."""
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        with self._lock:
            self._now += step
            return self._now


def to_utc(moment: datetime) -> datetime:
    """Normalise an aware datetime to UTC; naive datetimes are refused."""
    if moment.tzinfo is UTC:
        return moment
    if moment.tzinfo is None:
        raise ValueError("naive datetime: Tether stores only timezone-aware times")
    return moment.astimezone(UTC)


_last_formatted: tuple[datetime | None, str] = (None, "")
"""The last time formatted and its text: a durable step writes the same moment into its
run, checkpoint and event rows, so it is formatted once."""


def format_timestamp(moment: datetime) -> str:
    """The one text form of a time: ISO 8601, UTC, microseconds, ``Z``."""
    global _last_formatted
    last = _last_formatted
    if moment is last[0]:
        return last[1]
    utc = moment if moment.tzinfo is UTC else to_utc(moment)
    text = utc.isoformat(timespec="microseconds")[:-6] + "Z"  # "+00:00" -> "Z"
    _last_formatted = (moment, text)
    return text


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
