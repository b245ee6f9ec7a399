"""The lexicon's stems compiled as a trie find exactly what the plain alternation of the
same stems finds: on the team's corpus, the probe, the blind rounds, and texts built
around every stem (at a word start, inside a word, cut short, run on, at the end)."""

from __future__ import annotations

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.poisoning_blind import BLIND_ROUNDS
from tests.poisoning_corpus import items as corpus_items
from tests.poisoning_heldout import items as probe_items
from tether.memory.injection import normalise
from tether.memory.poisoning import categories
from tether.memory.poisoning_lexicon import _UNSPACED, LEXICON, LEXICON_STEMS, stem_trie


def _alternation(stems: list[str]) -> re.Pattern[str]:
    """The plain form: one branch per stem, longest first."""
    parts = []
    for stem in sorted(stems, key=len, reverse=True):
        start = "" if ord(stem[0]) >= _UNSPACED else r"\b"
        body = re.escape(stem[:-1]) + r"\b" if stem.endswith("$") else re.escape(stem)
        parts.append(start + body)
    return re.compile("(?:" + "|".join(parts) + ")")


PLAIN = {name: _alternation(stems) for name, stems in LEXICON_STEMS.items()}


def _same(text: str) -> None:
    for name, pattern in LEXICON.items():
        assert bool(pattern.search(text)) == bool(PLAIN[name].search(text)), (name, text)


def _around(stem: str) -> list[str]:
    body = stem.rstrip("$")
    return [
        body,
        f"x {body} y",
        f"{body}s and more",
        f"un{body}",
        f"{body[:-1]} {body[-1:]}",
        f"{body[:-1]}",
        f"say: {body}, then",
        f"{body}_{body}",
        f"{body}'s",
        f"{body}9",
    ]


def test_the_trie_finds_what_the_alternation_finds_around_every_stem() -> None:
    for stems in LEXICON_STEMS.values():
        for stem in stems:
            for text in _around(stem):
                _same(text)


def test_the_trie_finds_what_the_alternation_finds_on_every_corpus() -> None:
    texts = [item.text for item in corpus_items()] + [item.text for item in probe_items()]
    texts += [item.text for item in probe_items(BLIND_ROUNDS)]
    assert len(texts) > 1000
    for text in texts:
        _same(normalise(text))


_LETTERS = sorted({char for stems in LEXICON_STEMS.values() for stem in stems for char in stem})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [stem.rstrip("$") for stems in LEXICON_STEMS.values() for stem in stems]
            ),
            st.text(alphabet=_LETTERS + list(string.punctuation), max_size=6),
        ),
        max_size=8,
    )
)
def test_the_trie_finds_what_the_alternation_finds_on_texts_of_stems(words: list[str]) -> None:
    _same(" ".join(words))
    _same("".join(words))


def test_a_prefix_outranks_a_whole_word_and_a_whole_word_ends_a_word() -> None:
    pattern = re.compile(r"\b" + stem_trie(["all$", "allow", "ab", "abc$"]))
    assert pattern.search("all of it")
    assert not pattern.search("ally")
    assert pattern.search("allowance")
    assert pattern.search("abcd")
    assert not pattern.search("tall")
    assert categories("") == ()
