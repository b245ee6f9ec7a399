"""Train the poisoning judge (:mod:`tether.memory.poisoning_judge`) on the team's corpora.

    PYTHONPATH=src:. python scripts/train_poisoning.py

The pool: the corpus's train split (``tests/poisoning_corpus.py``: seen families in seen
languages; its unseen split is never read), the held-out probe and the development
rounds (``tests/poisoning_heldout.py``) and the training files of
``tests/data/poisoning/train/`` (:mod:`tests.poisoning_authored`). The blind rounds
(``tests/poisoning_blind.py``, ``tests/data/poisoning/blind/``) are never read. Each text
is redacted as the write path does and read by every signal
(:func:`tether.memory.poisoning.read`); two L2-regularised logistic regressions are
fitted with numpy over the hashed features, one also over the default embedder's
vector.

Each threshold is picked by cross-validation: every fold leaves out one training file
(one author: often one language), the corpus, the probe or the rounds, and the threshold
is the one whose larger shortfall from :data:`BARS` (95% held, 90% allowed) over the
folds' predictions is the smallest.
The word classifiers' weights in the same file (``words``, the judge's evidence, fitted on
the corpus's train split before the judge existed) are carried over unchanged. Writes
``src/tether/memory/poisoning_model.json`` (``TETHER_TRAIN_OUT``: another file;
``TETHER_TRAIN_L2``: another L2 weight than 1e-3, to compare fits). About forty minutes on
two cores (each fold also weighs its held-out texts' sentences).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tests.poisoning_authored import training_items
from tests.poisoning_corpus import Item, train_split
from tests.poisoning_heldout import ROUNDS, items

from tether.memory import poisoning
from tether.memory.embeddings import load_default_embedder
from tether.memory.ingest import screen
from tether.memory.poisoning import VETO, Reading, Weighing, read, signals
from tether.memory.poisoning import embedding_evidence as classified
from tether.memory.poisoning_judge import EMBEDDING_SCALE, MODEL_FILE

BUCKETS = 1 << 15
L2 = float(os.environ.get("TETHER_TRAIN_L2", "1e-3"))
STEPS = 600
BARS = (0.95, 0.90)
"""The shares of harmful proposals held and of harmless ones allowed the judge is asked
for: the threshold balances its shortfall from each."""
KEEP = 1e-3
"""Weights smaller than this are left out of the shipped file."""


@dataclass(frozen=True)
class Rows:
    """A sparse matrix as (row, column, value) triples, with dense columns beside it."""

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    dense: np.ndarray

    def subset(self, mask: np.ndarray) -> Rows:
        keep = mask[self.rows]
        renumber = np.cumsum(mask) - 1
        return Rows(renumber[self.rows[keep]], self.cols[keep], self.vals[keep], self.dense[mask])

    def dot(self, weights: np.ndarray, dense: np.ndarray) -> np.ndarray:
        n = len(self.dense)
        found = weights[self.cols] * self.vals
        return np.bincount(self.rows, weights=found, minlength=n) + self.dense @ dense

    def tdot(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = values[self.rows] * self.vals
        return np.bincount(self.cols, weights=found, minlength=BUCKETS), self.dense.T @ values


Model = tuple[np.ndarray, np.ndarray, float]


def fit(x: Rows, y: np.ndarray) -> Model:
    """Logistic regression by full-batch gradient descent with momentum."""
    weights, dense, bias = np.zeros(BUCKETS), np.zeros(x.dense.shape[1]), 0.0
    vw, vd, vb = np.zeros(BUCKETS), np.zeros(x.dense.shape[1]), 0.0
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x.dot(weights, dense) + bias)))
        gw, gd = x.tdot(p - y)
        gw, gd = gw / len(y) + L2 * weights, gd / len(y) + L2 * dense
        vw, vd = 0.9 * vw - 0.5 * gw, 0.9 * vd - 0.5 * gd
        vb = 0.9 * vb - 0.5 * float(np.mean(p - y))
        weights, dense, bias = weights + vw, dense + vd, bias + vb
    return weights, dense, bias


def predict(model: Model, x: Rows) -> np.ndarray:
    weights, dense, bias = model
    return 1 / (1 + np.exp(-(x.dot(weights, dense) + bias)))


@dataclass(frozen=True)
class Sentences:
    """The sentences of the pool's texts of more than one (:func:`poisoning.sentences`),
    each read alone: ``owner`` is the row of the text each came from."""

    owner: np.ndarray
    readings: list[Reading]

    def rows(self, dense: np.ndarray) -> Rows:
        """The sentences as rows, each with its whole text's dense columns."""
        return matrix(self.readings, dense[self.owner])


def sentence_readings(texts: list[str], sources: list[str]) -> Sentences:
    owner, readings = [], []
    for row, (text, source) in enumerate(zip(texts, sources, strict=True)):
        parts = poisoning.sentences(text)
        if len(parts) > 1:
            owner += [row] * len(parts)
            readings += [read(part, source) for part in parts]
    return Sentences(np.array(owner, int), readings)


def out_of_fold(
    x: Rows, y: np.ndarray, groups: np.ndarray, owner: np.ndarray, parts: Rows
) -> tuple[np.ndarray, np.ndarray]:
    """Each proposal's score from the model fitted without its group, and its likeliest
    sentence's (``parts``, each the sentence of text ``owner``; NaN for a text of one
    sentence)."""
    scores, likeliest = np.zeros(len(y)), np.full(len(y), np.nan)
    for group in sorted(set(groups)):
        held = groups == group
        model = fit(x.subset(~held), y[~held])
        scores[held] = predict(model, x.subset(held))
        mine = held[owner]
        if mine.any():
            np.fmax.at(likeliest, owner[mine], predict(model, parts.subset(mine)))
    return scores, likeliest


def pick_threshold(scores: np.ndarray, y: np.ndarray, title: str) -> float:
    """The threshold closest to both bars (:data:`BARS`) on the out-of-fold scores: the
    larger of its two shortfalls the smallest."""
    best, best_margin = 0.5, -2.0
    for threshold in np.linspace(0.2, 0.8, 61):
        caught = float(np.mean(scores[y == 1] >= threshold))
        allowed = float(np.mean(scores[y == 0] < threshold))
        margin = min(caught - BARS[0], allowed - BARS[1])
        if margin > best_margin:
            best, best_margin = float(threshold), margin
    caught = float(np.mean(scores[y == 1] >= best))
    allowed = float(np.mean(scores[y == 0] < best))
    print(
        f"  {title}: threshold {best:.2f}, cross-validated caught {caught:.3f}, "
        f"allowed {allowed:.3f}",
        file=sys.stderr,
    )
    return best


def pool() -> tuple[list[Item], np.ndarray]:
    found = [(item, "corpus") for item in train_split()]
    found += [(item, "probe") for item in items()]
    found += [(item, "rounds") for item in items(ROUNDS)]
    found += [(item, f"file:{item.family}") for item in training_items()]
    return [item for item, _ in found], np.array([group for _, group in found])


def matrix(readings: list[Reading], dense: np.ndarray) -> Rows:
    rows, cols, vals = [], [], []
    for row, reading in enumerate(readings):
        found = sorted({value % BUCKETS for value in reading.digests})
        rows += [row] * len(found)
        cols += found
        vals += [1.0] * len(found)
    return Rows(np.array(rows), np.array(cols), np.array(vals), dense)


def gates(
    readings: list[Reading],
    embedded: list[bool],
    scores: tuple[np.ndarray, np.ndarray],
    y: np.ndarray,
    judged_by: str,
) -> None:
    """What the whole poisoning check (:func:`tether.memory.poisoning.signals`) would
    hold on the out-of-fold scores (each text's and its likeliest sentence's), for other
    values of ``ALONE`` and ``VETO``."""
    weighings = [
        Weighing(
            reading,
            float(whole),
            flag,
            judged_by,
            None if np.isnan(sentence) or whole < VETO else float(sentence),
        )
        for reading, flag, whole, sentence in zip(readings, embedded, *scores, strict=True)
    ]
    print(
        "  the whole check on cross-validated scores (alone, veto: caught, allowed):",
        file=sys.stderr,
    )
    for veto in (0.1, 0.2, 0.3):
        cells = []
        for alone in np.linspace(0.3, 0.9, 13):  # every 0.05
            held = np.array(
                [bool(signals(weighing, alone=float(alone), veto=veto)) for weighing in weighings]
            )
            cells.append(f"{alone:.2f}: {np.mean(held[y == 1]):.3f} {np.mean(~held[y == 0]):.3f}")
        print(f"    veto {veto}: " + "; ".join(cells), file=sys.stderr)


def shipped(model: Model, threshold: float) -> dict[str, object]:
    weights, dense, bias = model
    return {
        "buckets": BUCKETS,
        "bias": round(bias, 5),
        "threshold": round(threshold, 3),
        "weights": {str(i): round(float(w), 4) for i, w in enumerate(weights) if abs(w) > KEEP},
        "dense": [round(float(w), 5) for w in dense],
    }


def main() -> None:
    embedder = load_default_embedder()
    if embedder is None:
        raise SystemExit("the default embedder is needed: pip install 'tether[embeddings]'")
    found, groups = pool()
    y = np.array([item.harmful for item in found], float)
    print(f"training on {len(found)} proposals, {len(set(groups))} groups", file=sys.stderr)
    texts = [screen(item.text)[1] for item in found]
    sources = [item.source_type for item in found]
    readings = [read(text, source) for text, source in zip(texts, sources, strict=True)]
    vectors = np.asarray(embedder.embed(texts), float)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    lexical = matrix(readings, np.zeros((len(found), 0)))
    embedded = Rows(lexical.rows, lexical.cols, lexical.vals, unit * EMBEDDING_SCALE)
    parts = sentence_readings(texts, sources)
    model: dict[str, object] = {"embedder_prefix": embedder.id.split("-int8")[0]}
    for name, x in (("lexical", lexical), ("embedding", embedded)):
        scores = out_of_fold(x, y, groups, parts.owner, parts.rows(x.dense))
        threshold = pick_threshold(scores[0], y, name)
        model[name] = shipped(fit(x, y), threshold)
        flags = [False] * len(found)
        if name == "embedding":
            flags = [
                classified(list(vector), source, reading)
                for vector, source, reading in zip(vectors, sources, readings, strict=True)
            ]
        gates(readings, flags, scores, y, name)
    default = Path(__file__).resolve().parents[1] / "src" / "tether" / "memory" / MODEL_FILE
    path = Path(os.environ.get("TETHER_TRAIN_OUT", default))
    # The word classifiers (fitted on the corpus's train split alone, before the judge)
    # are kept as they were.
    shipped_file = default.read_text("utf-8") if default.exists() else "{}"
    model["words"] = json.loads(shipped_file)["words"]
    path.write_text(json.dumps(model, separators=(",", ":")) + "\n")
    print(f"wrote {path.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
