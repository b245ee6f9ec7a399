"""Train the poisoning detector's two classifiers on the corpus's train split only.

    PYTHONPATH=src:. python scripts/train_poisoning.py

Reads ``tests/poisoning_corpus.py`` (:func:`train_split`: seen families in seen
languages; the unseen split is never read), redacts each text as the write path does,
and fits two L2-regularised logistic regressions with numpy: one over the hashed features
of :func:`tether.memory.poisoning.features`, one over the default embedder's vectors (with
the source). Each threshold is picked by cross-validation over the train split's families
(a family is never in its own validation fold): the highest recall whose harmless items
are still allowed at :data:`ALLOWED_TARGET`. Writes
``src/tether/memory/poisoning_model.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from tests.poisoning_corpus import Item, train_split

from tether.memory.embeddings import load_default_embedder
from tether.memory.injection import normalise
from tether.memory.pii import redact
from tether.memory.poisoning import MODEL_FILE, bucket, categories, features

BUCKETS = 1 << 14
SOURCES = ("user_message", "human", "tool_result", "document", "model_inference", "system")
ALLOWED_TARGET = 0.97
L2 = 1e-2
STEPS = 1500


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Logistic regression by full-batch gradient descent with momentum."""
    weights, bias = np.zeros(x.shape[1]), 0.0
    velocity, vbias = np.zeros_like(weights), 0.0
    rate = 0.5
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ weights + bias)))
        grad = x.T @ (p - y) / len(y) + l2 * weights
        gbias = float(np.mean(p - y))
        velocity = 0.9 * velocity - rate * grad
        vbias = 0.9 * vbias - rate * gbias
        weights, bias = weights + velocity, bias + vbias
    return weights, bias


def hashed_matrix(items: list[Item]) -> np.ndarray:
    x = np.zeros((len(items), BUCKETS))
    for row, item in enumerate(items):
        plain = normalise(redact(item.text))
        for name in features(plain, item.source_type, categories(plain)):
            x[row, bucket(name, BUCKETS)] += 1.0
    return np.minimum(x, 1.0)


def embedding_matrix(items: list[Item], vectors: np.ndarray) -> np.ndarray:
    sources = np.array([[item.source_type == s for s in SOURCES] for item in items], float)
    return np.hstack([vectors, sources])


def pick_threshold(x: np.ndarray, y: np.ndarray, families: list[str]) -> float:
    """Cross-validated over families: the threshold with the best recall at the target."""
    scores = np.zeros(len(y))
    names = sorted(set(families))
    folds = [names[i::5] for i in range(5)]
    for fold in folds:
        held = np.array([family in fold for family in families])
        weights, bias = fit(x[~held], y[~held])
        scores[held] = 1 / (1 + np.exp(-(x[held] @ weights + bias)))
    best, best_recall = 0.5, -1.0
    for threshold in np.linspace(0.05, 0.95, 91):
        allowed = float(np.mean(scores[y == 0] < threshold))
        recall = float(np.mean(scores[y == 1] >= threshold))
        if allowed >= ALLOWED_TARGET and recall > best_recall:
            best, best_recall = float(threshold), recall
    print(f"  cross-validated threshold {best:.2f}: recall {best_recall:.3f}", file=sys.stderr)
    return best


def main() -> None:
    items = train_split()
    y = np.array([item.harmful for item in items], float)
    families = [item.family for item in items]
    print(f"training on {len(items)} items", file=sys.stderr)
    x = hashed_matrix(items)
    threshold = pick_threshold(x, y, families)
    weights, bias = fit(x, y)
    hashed = {
        "buckets": BUCKETS,
        "bias": round(bias, 5),
        "threshold": round(threshold, 3),
        "weights": {str(i): round(float(w), 5) for i, w in enumerate(weights) if abs(w) > 1e-4},
    }
    embedder = load_default_embedder()
    if embedder is None:
        raise SystemExit("the default embedder is needed: pip install 'tether[embeddings]'")
    vectors = np.asarray(embedder.embed([redact(item.text) for item in items]), float)
    xe = embedding_matrix(items, vectors)
    embedding_threshold = pick_threshold(xe, y, families)
    eweights, ebias = fit(xe, y, l2=1e-3)
    dim = vectors.shape[1]
    embedding = {
        "embedder_prefix": embedder.id.split("-int8")[0],
        "bias": round(ebias, 5),
        "threshold": round(embedding_threshold, 3),
        "weights": [round(float(w), 5) for w in eweights[:dim]],
        "sources": {s: round(float(w), 5) for s, w in zip(SOURCES, eweights[dim:], strict=True)},
    }
    path = Path(__file__).resolve().parents[1] / "src" / "tether" / "memory" / MODEL_FILE
    path.write_text(json.dumps({"hashed": hashed, "embedding": embedding}, indent=None) + "\n")
    print(f"wrote {path.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
