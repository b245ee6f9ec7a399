"""The poisoning judge: one logistic regression that decides whether a proposal is held,
over the text and over what every other signal of :mod:`tether.memory.poisoning` found.

The other signals (the authority frames, the structural rules, the lexicon, the
instruction patterns) are each a hand-written reading of what a poisoning proposal looks
like; on wording nobody wrote them for, each errs on its own side (a rule fires on "keep
the four-eyes check on my transfers", a frame misses "my OK weighs as much as the
director's"). The judge weighs them, together with what they do not see, as features:

- words, word pairs and character 5-grams of the normalised text (:func:`text_features`);
- the word classes of :mod:`tether.memory.authority` in the order they come (a right, a
  control, a negation, the writer, the agent...), alone, in pairs and one apart: the same
  classes in every language the lexicon knows, so "darf ich keine", "may not" and "no
  puedo" are one shape;
- each signal, frame and rule that fired, and whether the text speaks of authority only
  as denied or restricted, or of a control only as kept or tightened, each also crossed
  with the source;
- with the default embedder installed, its vector of the (redacted) text.

Two sets of weights are shipped in ``poisoning_model.json``: one with the embedder's
vector (used when the installed embedder is the model they were trained for) and one
without. ``scripts/train_poisoning.py`` fits both on the team's corpora and picks each
threshold by cross-validation, a corpus or author never in its own validation fold. It
needs no optional package at run time: the weights are read once and scored in Python.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from tether.memory.authority import Frames, word_classes

MODEL_FILE = "poisoning_model.json"
EMBEDDING_SCALE = 4.0
"""The unit vector's entries are multiplied by this before the dense weights: a cosine's
scale next to the sparse features' ones."""


def text_features(plain: str, source: str, found: Sequence[str]) -> list[str]:
    """Words, word pairs, character 5-grams inside words, the lexicon's categories with
    their pairs and source crosses, the source."""
    words = plain.split()
    names = [f"w:{word}" for word in words]
    names += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
    for word in words:
        padded = f" {word} "
        names += [f"c:{padded[i : i + 5]}" for i in range(max(1, len(padded) - 4))]
    names += [f"s:{source}", *(f"k:{name}" for name in found)]
    names += [f"k:{name}|s:{source}" for name in found]
    names += [f"k:{a}+{b}" for i, a in enumerate(found) for b in found[i + 1 :]]
    return names


def class_features(text: str, source: str) -> list[str]:
    """The authority word classes in order: each class (and with the source), each pair
    of neighbouring classed words and each pair one classed word apart."""
    sequence = [sorted(tags) for tags in word_classes(text) if tags]
    flat = {name for tags in sequence for name in tags}
    names = [f"t:{name}" for name in flat] + [f"t:{name}|s:{source}" for name in flat]
    for gap, prefix in ((1, "tt"), (2, "t2")):
        for first, second in zip(sequence, sequence[gap:], strict=False):
            names += [f"{prefix}:{a}>{b}" for a in first for b in second]
    return names


def evidence_features(
    source: str, signals: Sequence[str], framed: Frames, fired_rules: Sequence[str], kept: bool
) -> list[str]:
    """What the other signals found, each alone and crossed with the source."""
    found = [f"sig:{name}" for name in signals]
    found += [f"frame:{name}" for name in framed.fired]
    found += [f"rule:{name}" for name in fired_rules]
    names = found + [f"{name}|s:{source}" for name in found if not name.startswith("frame:")]
    flags = {"restricted": framed.restricted, "strengthened": framed.strengthened, "kept": kept}
    return names + [f"flag:{name}" for name, on in flags.items() if on]


@lru_cache(maxsize=1 << 16)
def digest(name: str) -> int:
    """A feature name's hash, taken once: each model keeps it modulo its bucket count.
    The names most texts share (words, their 5-grams, classes) are kept hashed."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big")


@dataclass(frozen=True)
class Judge:
    """One set of weights: hashed sparse features (each present or not) and, optionally,
    the embedding's."""

    buckets: int
    weights: dict[int, float]
    dense: tuple[float, ...]
    bias: float
    threshold: float

    def score(self, digests: Sequence[int], vector: Sequence[float] | None = None) -> float:
        """The probability that the proposal is poisoning, from its features'
        :func:`digest` values."""
        hashed = {value % self.buckets for value in digests}
        total = self.bias + math.fsum(self.weights.get(index, 0.0) for index in hashed)
        if self.dense and vector is not None:
            if len(vector) != len(self.dense):
                raise ValueError(f"a vector of {len(vector)} for {len(self.dense)} weights")
            norm = math.hypot(*vector) or 1.0
            total += math.fsum(map(operator.mul, self.dense, vector)) * EMBEDDING_SCALE / norm
        return _sigmoid(total)


@dataclass(frozen=True)
class WordClassifiers:
    """The two classifiers the judge came after, kept as evidence it can overrule: a
    logistic regression over :func:`text_features` and one over the default embedder's
    vector with the source, both fitted on the corpus's train split only."""

    buckets: int
    weights: dict[int, float]
    bias: float
    threshold: float
    embedding_weights: tuple[float, ...]
    embedding_sources: dict[str, float]
    embedding_bias: float
    embedding_threshold: float

    def hashed(self, digests: Sequence[int]) -> float:
        """The word classifier's probability, from :func:`text_features`' digests."""
        weights = self.weights
        total = self.bias + sum(weights.get(value % self.buckets, 0.0) for value in digests)
        return _sigmoid(total)

    def embedded(self, vector: Sequence[float], source: str) -> float:
        total = self.embedding_bias + self.embedding_sources.get(source, 0.0)
        if len(vector) != len(self.embedding_weights):
            raise ValueError(f"a vector of {len(vector)} for {len(self.embedding_weights)} weights")
        return _sigmoid(total + math.fsum(map(operator.mul, self.embedding_weights, vector)))


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, value))))


@dataclass(frozen=True)
class Judges:
    """The shipped weights: without and with the default embedder's vector, and the
    word classifiers."""

    lexical: Judge
    embedding: Judge
    embedder_prefix: str
    words: WordClassifiers

    def pick(self, vector: Sequence[float] | None, embedder_id: str | None) -> Judge | None:
        """The embedding judge when ``vector`` comes from the model it was trained on,
        else ``None`` (use :attr:`lexical`)."""
        usable = embedder_id is not None and embedder_id.startswith(self.embedder_prefix)
        if usable and vector is not None and len(vector) == len(self.embedding.dense):
            return self.embedding
        return None


def _judge(data: dict[str, Any]) -> Judge:
    return Judge(
        buckets=int(data["buckets"]),
        weights={int(key): float(value) for key, value in data["weights"].items()},
        dense=tuple(float(value) for value in data.get("dense", ())),
        bias=float(data["bias"]),
        threshold=float(data["threshold"]),
    )


@cache
def judges() -> Judges:
    """The shipped weights (read once)."""
    data: dict[str, Any] = json.loads(
        resources.files("tether.memory").joinpath(MODEL_FILE).read_text("utf-8")
    )
    hashed, embedded = data["words"]["hashed"], data["words"]["embedding"]
    words = WordClassifiers(
        buckets=int(hashed["buckets"]),
        weights={int(key): float(value) for key, value in hashed["weights"].items()},
        bias=float(hashed["bias"]),
        threshold=float(hashed["threshold"]),
        embedding_weights=tuple(float(value) for value in embedded["weights"]),
        embedding_sources={str(k): float(v) for k, v in embedded["sources"].items()},
        embedding_bias=float(embedded["bias"]),
        embedding_threshold=float(embedded["threshold"]),
    )
    return Judges(
        lexical=_judge(data["lexical"]),
        embedding=_judge(data["embedding"]),
        embedder_prefix=str(data["embedder_prefix"]),
        words=words,
    )
