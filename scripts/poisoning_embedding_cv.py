"""How well the default embedder's vectors separate harmful from harmless proposals on
wording the classifier has not seen: cross-validation on the team's own data only.

    PYTHONPATH=src:. python scripts/poisoning_embedding_cv.py

The pool is the corpus's train split, the held-out probe and the development rounds
(``ROUNDS``); the corpus's unseen split and the blind rounds are never read. Two
classifiers over the (standardised) vector and the source: an L2 logistic regression and
a nearest-neighbour rule (the closest harmful proposal at cosine >= t and closer than any
harmless one). Folds leave out one group at a time (a corpus family, a probe domain, a
round) and, apart, one language. It prints the share of harmful proposals caught and of
harmless ones allowed at a few thresholds; ``docs/memory.md`` has the figures and why no
such signal was added.
"""

from __future__ import annotations

import numpy as np
from tests.poisoning_corpus import Item, train_split
from tests.poisoning_heldout import ROUNDS, items

from scripts.train_poisoning import fit
from tether.memory.embeddings import load_default_embedder
from tether.memory.ingest import screen

SOURCES = ("user_message", "human", "tool_result", "document", "model_inference")


def _pool() -> tuple[list[Item], list[str]]:
    pool = [(item, f"family:{item.family}") for item in train_split()]
    pool += [(item, f"probe:{item.family}") for item in items()]
    for name, block in ROUNDS.items():
        pool += [(item, f"round:{name}") for item in items({name: block})]
    return [item for item, _ in pool], [group for _, group in pool]


def _figures(scores: np.ndarray, labels: np.ndarray, threshold: float) -> str:
    caught = float(np.mean(scores[labels] >= threshold))
    allowed = float(np.mean(scores[~labels] < threshold))
    return f"{caught:.2f} / {allowed:.2f}"


def main() -> None:
    embedder = load_default_embedder()
    if embedder is None:
        raise SystemExit("the default embedder is not installed")
    pool, groups = _pool()
    vectors = np.asarray(embedder.embed([screen(item.text)[1] for item in pool]), dtype=float)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scaled = (vectors - vectors.mean(0)) / (vectors.std(0) + 1e-6)
    sources = np.array([[item.source_type == s for s in SOURCES] for item in pool], float)
    x = np.hstack([scaled, sources])
    labels = np.array([item.harmful for item in pool])
    group = np.array(groups)
    language = np.array([item.language for item in pool])
    folds = [group == name for name in sorted(set(groups))]
    by_language = [language == code for code in ("de", "fr", "es", "pt", "it", "nl")]
    for title, split in (("leave one group out", folds), ("leave one language out", by_language)):
        logistic = np.full(len(pool), np.nan)
        nearest = np.full(len(pool), np.nan)
        for test in split:
            train = ~test
            weights, bias = fit(x[train], labels[train].astype(float), 1e-2)
            logistic[test] = 1 / (1 + np.exp(-(x[test] @ weights + bias)))
            similar = unit[test] @ unit[train].T
            harmful = np.where(labels[train], similar, -1).max(1)
            harmless = np.where(~labels[train], similar, -1).max(1)
            nearest[test] = np.where(harmful > harmless, harmful, 0.0)
        seen = ~np.isnan(logistic)
        print(f"{title} ({int(seen.sum())} proposals), caught / allowed:")
        for threshold in (0.5, 0.7, 0.85):
            print(
                f"  logistic regression >= {threshold}: "
                f"{_figures(logistic[seen], labels[seen], threshold)}"
            )
        for threshold in (0.6, 0.7, 0.8):
            print(
                f"  nearest neighbour >= {threshold}: "
                f"{_figures(nearest[seen], labels[seen], threshold)}"
            )


if __name__ == "__main__":
    main()
