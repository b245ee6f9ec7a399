from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tether.clock import FakeClock
from tether.errors import InvalidInput
from tether.ids import UUID7Source, check_name, new_id, parse_id

START = datetime(2031, 5, 17, 12, 0, tzinfo=UTC)


def millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def timestamp_ms(value: uuid.UUID) -> int:
    return value.int >> 80


def test_ids_are_version_7_with_the_rfc_variant() -> None:
    source = UUID7Source(FakeClock(START))

    for value in (source.new_id() for _ in range(1000)):
        assert value.version == 7
        assert value.variant == uuid.RFC_4122
        assert (value.int >> 62) & 0b11 == 0b10


def test_module_level_ids_are_version_7_and_distinct() -> None:
    ids = [new_id() for _ in range(1000)]

    assert len(set(ids)) == 1000
    assert all(value.version == 7 for value in ids)


def test_ids_sort_in_creation_order_when_the_clock_does_not_move() -> None:
    source = UUID7Source(FakeClock(START))

    ids = [source.new_id() for _ in range(10_000)]

    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert [str(value) for value in ids] == sorted(str(value) for value in ids)


def test_ids_keep_order_when_the_clock_steps_back() -> None:
    clock = FakeClock(START)
    source = UUID7Source(clock)
    first = source.new_id()

    clock.advance(timedelta(seconds=-5))  # a wall clock corrected backwards by NTP
    second = source.new_id()

    assert second > first


def test_timestamp_bits_are_the_clocks_milliseconds() -> None:
    clock = FakeClock(START)
    source = UUID7Source(clock)

    for _ in range(500):
        value = source.new_id()
        assert timestamp_ms(value) == millis(clock.now())
        clock.advance(timedelta(milliseconds=1))


def test_timestamp_stays_close_to_a_clock_that_does_not_move() -> None:
    source = UUID7Source(FakeClock(START))

    ids = [source.new_id() for _ in range(10_000)]

    assert timestamp_ms(ids[0]) == millis(START)
    # The 12-bit counter may roll into the next milliseconds, never far.
    assert millis(START) <= timestamp_ms(ids[-1]) <= millis(START) + 10


def test_ids_from_many_threads_are_unique() -> None:
    source = UUID7Source(FakeClock(START))
    results: list[list[uuid.UUID]] = [[] for _ in range(8)]

    def make(bucket: list[uuid.UUID]) -> None:
        bucket.extend(source.new_id() for _ in range(1000))

    threads = [threading.Thread(target=make, args=(bucket,)) for bucket in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    every = [value for bucket in results for value in bucket]
    assert len(set(every)) == 8000
    for bucket in results:
        assert bucket == sorted(bucket)


def test_parse_id_accepts_a_uuid_and_names_what_was_expected() -> None:
    value = new_id()

    assert parse_id(str(value)) == value
    with pytest.raises(InvalidInput, match="run 'nope' is not a valid id"):
        parse_id("nope", what="run")


@pytest.mark.parametrize("name", ["acme", "a", "acme-2", "case.agent_1", "0x", "a" * 63])
def test_valid_names(name: str) -> None:
    assert check_name(name, what="tenant") == name


@pytest.mark.parametrize("name", ["", "Acme", "-acme", "ac me", "a" * 64, "acme/x", "ä", "acme\n"])
def test_invalid_names_are_refused_with_the_rule(name: str) -> None:
    with pytest.raises(InvalidInput, match="1-63 lowercase letters"):
        check_name(name, what="tenant")
