"""A scope matrix scores named memories by their best row, a grown matrix shares the row
index of the one it grew from without reading rows it does not have, and the int8 first
pass returns exactly what the float32 product returns, after appends and removals too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tether.memory import first_pass, vectors
from tether.memory.first_pass import Chunk, QueryCode
from tether.memory.vectors import ScopeMatrix, ScopeVectors


def rows(*values: list[float]) -> np.ndarray:
    matrix = np.asarray(values, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_a_memory_scores_its_best_row_and_one_without_rows_is_left_out() -> None:
    matrix = ScopeMatrix(["a", "b", "b"], rows([1, 0], [0, 1], [1, 1]))
    scores = matrix.scores_of(np.asarray([1.0, 0.0], dtype=np.float32), ["a", "b", "z"])
    assert set(scores) == {"a", "b"}
    assert scores["a"] == 1.0
    assert abs(scores["b"] - 2**-0.5) < 1e-6


def test_a_grown_matrix_shares_the_index_and_the_old_one_keeps_its_rows() -> None:
    before = ScopeMatrix(["a", "b"], rows([1, 0], [0, 1]))
    assert before.rows_of("b") == [1]
    grown = ScopeMatrix(["a", "b", "c", "a"], rows([1, 0], [0, 1], [1, 1], [0, 1]))
    grown.extend_rows(before, ["c", "a"])
    assert grown.rows_of("a") == [0, 3]
    assert grown.rows_of("c") == [2]
    assert before.rows_of("a") == [0]
    assert before.rows_of("c") == []
    query = np.asarray([0.0, 1.0], dtype=np.float32)
    assert grown.scores_of(query, ["a"])["a"] == 1.0
    assert before.scores_of(query, ["a"])["a"] == 0.0


# The int8 first pass (tether.memory.first_pass): from FIRST_PASS_ROWS rows up, with
# onnxruntime installed, the search scores int8 chunks, re-scores their best rows and every
# row its bound cannot rule out, and must return exactly what the float32 product returns.

CHUNK = vectors.CHUNK_ROWS


def unit_rows(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    matrix = rng.standard_normal((count, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def exact_top(matrix: ScopeMatrix, query: np.ndarray, pool: int) -> dict[str, float]:
    """The float32 product over every row, as the search runs below FIRST_PASS_ROWS."""
    search = ScopeVectors()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vectors, "FIRST_PASS_ROWS", 10**12)
        return search.top_scores(matrix, query, pool)()


def first_pass_top(matrix: ScopeMatrix, query: np.ndarray, pool: int) -> dict[str, float]:
    assert len(matrix) >= vectors.FIRST_PASS_ROWS
    return ScopeVectors().top_scores(matrix, query, pool)()


@pytest.fixture(autouse=True)
def _needs_onnxruntime(request: pytest.FixtureRequest) -> None:
    if "first_pass" in request.node.name and not first_pass.available():
        pytest.skip("the int8 first pass needs onnxruntime (the embeddings extra)")


def test_the_first_pass_bound_holds_for_every_row() -> None:
    rng = np.random.default_rng(1)
    rows = unit_rows(rng, 4_000, 96)
    rows[:10] *= 0.0  # rows of zeros have a scale too
    chunk = Chunk(rows, 0)
    for query in unit_rows(rng, 20, 96):
        code = QueryCode(query)
        exact = np.einsum("ij,j->i", rows, query)
        assert np.abs(chunk.scores(code) - exact).max() <= chunk.bound(code)


def test_the_first_pass_returns_what_the_exact_product_returns() -> None:
    rng = np.random.default_rng(2)
    count = 2 * CHUNK + 1_234  # two chunks and rows past them, scored in float32
    matrix = ScopeMatrix([f"m{i:06d}" for i in range(count)], unit_rows(rng, count, 48))
    for query in unit_rows(rng, 40, 48):
        for pool in (1, 10, 60):
            assert first_pass_top(matrix, query, pool) == exact_top(matrix, query, pool)


def test_the_first_pass_is_exact_among_near_twins_and_sentence_rows() -> None:
    # Clusters of near-identical rows put many scores inside the first pass's bound, so
    # the rows it cannot rule out are re-scored too; some memories have several rows.
    rng = np.random.default_rng(3)
    count = 2 * CHUNK + 500
    centres = unit_rows(rng, 40, 32)
    noisy = centres[rng.integers(0, 40, count)] + 0.01 * rng.standard_normal((count, 32))
    rows = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"m{i // 3:06d}" if i % 7 == 0 else f"m{i:06d}" for i in range(count)]
    matrix = ScopeMatrix(ids, rows)
    assert matrix.rows_per_memory > 1
    queries = np.concatenate([centres[:10], unit_rows(rng, 10, 32)])
    for query in queries:
        assert first_pass_top(matrix, query, 60) == exact_top(matrix, query, 60)


class FakeVectors:
    """The two storage calls ScopeVectors.matrix_txn makes, over a dict of rows."""

    def __init__(self) -> None:
        self.rows: dict[str, np.ndarray] = {}
        self.version = 0

    def scope_vector_versions(self, tenant: str, scopes: tuple[str, ...]) -> dict[str, int]:
        return {scope: self.version for scope in scopes}

    def list_scope_vectors(
        self, tenant: str, *, embedder_id: str, scopes: list[str]
    ) -> list[tuple[str, bytes]]:
        return [(memory_id, row.tobytes()) for memory_id, row in self.rows.items()]


def test_the_first_pass_stays_exact_after_appends_and_removals() -> None:
    rng = np.random.default_rng(4)
    dim, key = 40, "user:u1"
    store = FakeVectors()
    store.rows = {f"m{i:06d}": row for i, row in enumerate(unit_rows(rng, 2 * CHUNK + 100, dim))}
    store.version = 1
    search = ScopeVectors()
    txn: Any = store
    queries = unit_rows(rng, 8, dim)

    def check() -> ScopeMatrix:
        matrix = search.matrix_txn(txn, "t", "e", [key])
        fresh = ScopeMatrix(list(store.rows), np.stack(list(store.rows.values())))
        for query in queries:
            assert search.top_scores(matrix, query, 30)() == exact_top(fresh, query, 30)
        return matrix

    loaded = check()
    assert len(loaded.first_pass()) == 2
    # An append (the batch API) grows the cached matrix and keeps its chunks; a memory
    # equal to a query is found first.
    for batch in range(3):
        ids = [f"n{batch}-{i:05d}" for i in range(CHUNK // 2)]
        added = unit_rows(rng, len(ids), dim)
        added[0] = queries[batch]
        store.rows.update(zip(ids, added, strict=True))
        store.version += 1
        search.appended("t", "e", {key: (ids, list(added))}, {key: store.version})
        grown = check()
        assert grown is not loaded and len(grown) == len(store.rows)
        assert grown.first_pass()[:2] == loaded.first_pass()
        assert next(iter(search.top_scores(grown, queries[batch], 5)())) == ids[0]
    assert len(grown.first_pass()) == len(store.rows) // CHUNK == 3
    # A removal (any other write) bumps the counter: the matrix and its chunks are read
    # again, without the removed memory.
    best = next(iter(search.top_scores(grown, queries[1], 5)()))
    del store.rows[best]
    store.version += 1
    reread = check()
    assert reread is not grown and best not in search.top_scores(reread, queries[1], 60)()


def test_without_onnxruntime_the_search_stays_on_float32_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(5)
    count = 2 * CHUNK
    matrix = ScopeMatrix([f"m{i:06d}" for i in range(count)], unit_rows(rng, count, 16))
    query = unit_rows(rng, 1, 16)[0]
    monkeypatch.setattr(first_pass, "available", lambda: False)
    assert ScopeVectors().top_scores(matrix, query, 20)() == exact_top(matrix, query, 20)
    assert matrix._chunks == ()
