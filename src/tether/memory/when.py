"""Dates and relative time in a recall query (the window of event time it names, and
whether it asks when), and how a memory's time answers it.

"in May 2023", "on 8 May 2023", "2023-05-08", "in 2022", "yesterday", "last week",
"three days ago": each names a span of days, resolved against the moment recall answers
for (its ``as_of`` or now). Recall ranks memories whose event time (``valid_from``) falls
in the span above those outside it. English only, and deliberately small: a query with no
recognisable date is ranked without a time term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_YEAR = re.compile(r"\d{4}")
"""Every absolute date recall reads has a year: text without four digits has none (a
cheap first look, since recall reads the time of up to a few hundred texts)."""
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?(\d{{4}})\b")
_IN_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b")
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(day|week|month|year)s?\s+ago\b"
)
_RELATIVE = {
    "today": (0, 1),
    "yesterday": (-1, 0),
    "last night": (-1, 1),
    "this week": (-7, 1),
    "last week": (-14, -6),
    "past week": (-7, 1),
    "this month": (-31, 1),
    "last month": (-62, -28),
    "past month": (-31, 1),
    "this year": (-366, 1),
    "last year": (-731, -364),
    "past year": (-366, 1),
}
_UNITS = ("day", "night", "week", "month", "year")
"""A word of every relative time (a cheap first look, as :data:`_YEAR`)."""
_RELATIVE_WORDS = re.compile(r"\b(" + "|".join(_RELATIVE) + r")\b")


@dataclass(frozen=True)
class TimeWindow:
    """Event times from ``start`` (inclusive) to ``end`` (exclusive), and the words of
    the query that named them (for the explanation)."""

    start: datetime
    end: datetime
    said: str

    def holds(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def overlaps(self, other: TimeWindow | None) -> bool:
        return other is not None and self.start < other.end and other.start < self.end


TIME_WEIGHT = 0.2
"""Relevance recall adds to a memory whose event time, or a time its text names, falls in
the span the query names."""

WHEN_WEIGHT = 0.1
"""Relevance recall adds to a memory whose text names a time, when the query asks for one
("when did ...", "how long ago ..."): the answer to such a question says when."""

_ASKS_WHEN = re.compile(r"\b(?:when|how long|what (?:date|day|month|year|time))\b")


def asks_when(query: str) -> bool:
    """Whether ``query`` asks for a time ("when did ...", "how long ago ...")."""
    return _ASKS_WHEN.search(query.casefold()) is not None


def query_window(query: str, moment: datetime) -> TimeWindow | None:
    """The span of event time ``query`` names, resolved against ``moment``; ``None``
    when it names none (or an impossible date)."""
    text = query.casefold()
    try:
        return (_absolute(text) if _YEAR.search(text) else None) or _relative(text, moment)
    except (ValueError, OverflowError):
        return None


def _absolute(text: str) -> TimeWindow | None:
    found = _ISO.search(text)
    if found:
        year, month, day = (int(part) for part in found.groups())
        return _days(datetime(year, month, day, tzinfo=UTC), 1, found.group(0))
    found = _DAY_MONTH_YEAR.search(text)
    if found:
        day, month, year = int(found.group(1)), _MONTHS[found.group(2)], int(found.group(3))
        return _days(datetime(year, month, day, tzinfo=UTC), 1, found.group(0))
    found = _MONTH_DAY_YEAR.search(text)
    if found:
        month, day, year = _MONTHS[found.group(1)], int(found.group(2)), int(found.group(3))
        return _days(datetime(year, month, day, tzinfo=UTC), 1, found.group(0))
    found = _MONTH_YEAR.search(text)
    if found:
        month, year = _MONTHS[found.group(1)], int(found.group(2))
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return TimeWindow(start, end, found.group(0))
    found = _IN_YEAR.search(text)
    if found:
        year = int(found.group(1))
        return TimeWindow(
            datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), found.group(0)
        )
    return None


def _relative(text: str, moment: datetime) -> TimeWindow | None:
    if not any(unit in text for unit in _UNITS):
        return None
    today = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    found = _AGO.search(text) if "ago" in text else None
    if found:
        count = found.group(1)
        amount = int(count) if count.isdigit() else _NUMBERS[count]
        span = _UNIT_DAYS[found.group(2)]
        centre = today - timedelta(days=amount * span)
        slack = max(1, span // 2)
        return TimeWindow(
            centre - timedelta(days=slack), centre + timedelta(days=slack + 1), found.group(0)
        )
    found = _RELATIVE_WORDS.search(text)
    if found:
        first, last = _RELATIVE[found.group(1)]
        return TimeWindow(
            today + timedelta(days=first), today + timedelta(days=last), found.group(0)
        )
    return None


def _days(start: datetime, days: int, said: str) -> TimeWindow:
    return TimeWindow(start, start + timedelta(days=days), said)


def time_evidence(
    window: TimeWindow | None, asks: bool, moment: datetime, text: str
) -> list[tuple[float, str]]:
    """How a memory of event time ``moment`` answers a query's time, each part with its
    weight and what it means: its event time, or else a time its text names (resolved
    against its event time: "yesterday" in a memory of 8 May is 7 May), within the
    ``window`` the query names; and a time named at all, when the query ``asks`` when."""
    found: list[tuple[float, str]] = []
    if window is None and not asks:
        return found
    stated = query_window(text, moment)
    if window is not None and window.holds(moment):
        found.append((TIME_WEIGHT, f"event time within '{window.said}'"))
    elif window is not None and window.overlaps(stated):
        found.append((TIME_WEIGHT, f"names a time within '{window.said}'"))
    if asks and stated is not None:
        found.append((WHEN_WEIGHT, f"names a time ('{stated.said}') and the query asks when"))
    return found
