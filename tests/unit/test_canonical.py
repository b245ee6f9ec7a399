from __future__ import annotations

import enum
import json
import uuid
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from tether import canonical
from tether.errors import InvalidInput


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Case(BaseModel):
    case_id: uuid.UUID
    opened: datetime
    colour: Colour
    tags: list[str]


storable_text = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | storable_text,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(
                st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=8
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


def test_keys_are_sorted_at_every_depth_without_whitespace() -> None:
    text = canonical.dumps({"b": 1, "a": {"z": [3, {"y": 1, "x": 2}], "c": None}})

    assert text == '{"a":{"c":null,"z":[3,{"x":2,"y":1}]},"b":1}'


def test_text_is_utf8_not_escaped() -> None:
    assert canonical.dumps({"name": "Zoë ✓"}) == '{"name":"Zoë ✓"}'


def test_insertion_order_does_not_change_the_digest() -> None:
    first = {"alpha": 1, "beta": [1, 2], "gamma": {"x": 1, "y": 2}}
    second = {"gamma": {"y": 2, "x": 1}, "beta": [1, 2], "alpha": 1}

    assert canonical.digest(first) == canonical.digest(second)


def test_digest_is_a_stable_sha256_of_the_canonical_text() -> None:
    # Pinned: a library upgrade must never change the digest of the same value.
    assert canonical.digest({"b": [1, "x"], "a": None}) == (
        "c22cb7b0353770e2b38094af641143ebf008ddf2d1f2dedb9d875996fcf245fa"
    )


def test_different_values_have_different_digests() -> None:
    assert canonical.digest({"amount": 100}) != canonical.digest({"amount": 101})
    assert canonical.digest([1, 2]) != canonical.digest([2, 1])


@given(json_values)
def test_round_trip_and_reencoding_are_stable(value: object) -> None:
    text = canonical.dumps(value)

    assert canonical.dumps(canonical.loads(text)) == text
    assert canonical.digest(canonical.loads(text)) == canonical.digest(value)


@pytest.mark.parametrize(
    "bad",
    [float("nan"), float("inf"), float("-inf"), 2**63, -(2**63) - 1, "a\x00", "\udcff"],
    ids=["nan", "inf", "-inf", "int over 64 bits", "int under 64 bits", "nul", "surrogate"],
)
def test_what_a_backend_cannot_store_faithfully_is_refused(bad: object) -> None:
    with pytest.raises(InvalidInput):
        canonical.dumps({"score": bad})
    with pytest.raises(InvalidInput):
        canonical.dumps({"deep": [bad]})


@pytest.mark.parametrize(
    "bad",
    [object(), b"bytes", Decimal("1.5"), date(2030, 1, 1), Path("/etc/passwd"), timedelta(1)],
    ids=["object", "bytes", "decimal", "date", "path", "timedelta"],
)
def test_arbitrary_objects_are_refused_with_invalid_input(bad: object) -> None:
    with pytest.raises(InvalidInput, match="cannot store a value of type"):
        canonical.dumps({"value": bad})


@pytest.mark.parametrize("key", [uuid.UUID(int=1), object()], ids=["uuid-key", "object-key"])
def test_dicts_with_non_string_keys_are_refused_with_invalid_input(key: object) -> None:
    with pytest.raises(InvalidInput):
        canonical.dumps({key: 1})


def test_naive_datetime_is_refused_with_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        canonical.dumps({"at": datetime(2030, 1, 1, 12, 0)})


def test_datetimes_are_encoded_once_in_utc() -> None:
    in_utc = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    in_cet = in_utc.astimezone(timezone(timedelta(hours=1)))

    assert canonical.dumps(in_utc) == '"2030-01-01T12:00:00.000000Z"'
    assert canonical.dumps(in_cet) == canonical.dumps(in_utc)


def test_uuid_enum_set_and_tuple_values() -> None:
    value = {
        "id": uuid.UUID("01890a5d-ac96-774b-bcce-b302099a8057"),
        "colour": Colour.RED,
        "level": Level.HIGH,
        "tags": {"b", "a"},
        "pair": (1, 2),
    }

    assert json.loads(canonical.dumps(value)) == {
        "id": "01890a5d-ac96-774b-bcce-b302099a8057",
        "colour": "red",
        "level": 3,
        "tags": ["a", "b"],
        "pair": [1, 2],
    }


def test_pydantic_models_are_encoded_with_the_one_timestamp_form() -> None:
    case = Case(
        case_id=uuid.UUID("01890a5d-ac96-774b-bcce-b302099a8057"),
        opened=datetime(2030, 1, 1, tzinfo=UTC),
        colour=Colour.RED,
        tags=["x"],
    )

    assert json.loads(canonical.dumps({"case": case})) == {
        "case": {
            "case_id": "01890a5d-ac96-774b-bcce-b302099a8057",
            "opened": "2030-01-01T00:00:00.000000Z",
            "colour": "red",
            "tags": ["x"],
        }
    }
    assert canonical.digest(case) == canonical.digest(case.model_copy())


def test_equal_models_with_times_in_other_zones_have_one_encoding() -> None:
    in_utc = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    in_cet = in_utc.astimezone(timezone(timedelta(hours=1)))
    first = Case(case_id=uuid.UUID(int=7), opened=in_utc, colour=Colour.RED, tags=[])
    second = Case(case_id=uuid.UUID(int=7), opened=in_cet, colour=Colour.RED, tags=[])

    assert first == second
    assert canonical.digest(first) == canonical.digest(second)
