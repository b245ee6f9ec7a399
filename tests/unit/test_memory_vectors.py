"""A scope matrix scores named memories by their best row, and a grown matrix shares the
row index of the one it grew from without reading rows it does not have."""

from __future__ import annotations

import numpy as np

from tether.memory.vectors import ScopeMatrix


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
