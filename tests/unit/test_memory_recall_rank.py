"""The ranking helpers of recall: the share of a text that asks, min-max scaling."""

from __future__ import annotations

import pytest

from tether.memory.recall_rank import min_max, question_share


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("The studio opens on Friday.", 0.0),
        ("Are you coming to the opening?", 1.0),
        ("That's great! How did the opening go?", 0.5),
        ('She asked "why not?" and left. We stayed.', 0.0),
        ("Really?! I had no idea.", 0.5),
        ("", 0.0),
    ],
)
def test_question_share_counts_the_sentences_that_ask(text: str, share: float) -> None:
    assert question_share(text) == pytest.approx(share)


def test_min_max_scales_between_the_lowest_and_highest() -> None:
    assert min_max({}) == {}
    assert min_max({"a": 2.0, "b": 2.0}) == {"a": 1.0, "b": 1.0}
    assert min_max({"a": 1.0, "b": 3.0, "c": 2.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
