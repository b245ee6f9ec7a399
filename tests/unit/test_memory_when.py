"""The time a recall query names: absolute dates, months, years and relative time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tether.memory.when import (
    TIME_WEIGHT,
    WHEN_WEIGHT,
    asks_when,
    query_window,
    time_evidence,
)

NOW = datetime(2024, 3, 20, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did we decide on 2023-05-08?", datetime(2023, 5, 8), datetime(2023, 5, 9)),
        ("what happened on 8 May, 2023", datetime(2023, 5, 8), datetime(2023, 5, 9)),
        ("the 21st of December 2022 party", datetime(2022, 12, 21), datetime(2022, 12, 22)),
        ("notes from May 8th, 2023", datetime(2023, 5, 8), datetime(2023, 5, 9)),
        ("trips in December 2023", datetime(2023, 12, 1), datetime(2024, 1, 1)),
        ("what did she paint in Sept. 2022", datetime(2022, 9, 1), datetime(2022, 10, 1)),
        ("books read in 2021", datetime(2021, 1, 1), datetime(2022, 1, 1)),
        ("what did I say yesterday", datetime(2024, 3, 19), datetime(2024, 3, 20)),
        ("plans made last week", datetime(2024, 3, 6), datetime(2024, 3, 14)),
        ("the call three days ago", datetime(2024, 3, 16), datetime(2024, 3, 19)),
        ("the call 2 weeks ago", datetime(2024, 3, 3), datetime(2024, 3, 10)),
    ],
)
def test_a_query_names_a_span_of_event_time(query: str, start: datetime, end: datetime) -> None:
    window = query_window(query, NOW)

    assert window is not None
    assert (window.start, window.end) == (start.replace(tzinfo=UTC), end.replace(tzinfo=UTC))
    assert window.said in query.casefold()


@pytest.mark.parametrize(
    "query",
    [
        "When did Caroline go to the support group?",
        "May I see the receipts?",
        "the 2023 budget",
        "what happened on 31 February 2023",
    ],
)
def test_a_query_without_a_date_names_no_span(query: str) -> None:
    assert query_window(query, NOW) is None


@pytest.mark.parametrize("query", ["99999999999999 days ago", "in December 9999", "0 May 2023"])
def test_an_impossible_span_names_none(query: str) -> None:
    assert query_window(query, NOW) is None


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did Caroline go to the support group?", True),
        ("How long has Nate had his turtles?", True),
        ("what date was the launch", True),
        ("What did Caroline paint?", False),
        ("Whenever it rains, what do we do?", False),
    ],
)
def test_a_query_asks_when_or_not(query: str, asks: bool) -> None:
    assert asks_when(query) is asks


def test_a_memory_answers_the_query_time_by_its_event_time_or_the_time_it_names() -> None:
    may_8 = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)
    window = query_window("on 7 May 2023", NOW)

    assert time_evidence(window, False, may_8, "We went to the fair yesterday") == [
        (TIME_WEIGHT, "names a time within '7 may 2023'")
    ]
    assert time_evidence(window, False, may_8, "We went to the fair") == []
    assert time_evidence(None, True, may_8, "We went to the fair two days ago") == [
        (WHEN_WEIGHT, "names a time ('two days ago') and the query asks when")
    ]
    assert time_evidence(None, False, may_8, "We went to the fair yesterday") == []
