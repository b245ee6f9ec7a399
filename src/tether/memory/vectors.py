"""Exact vector search within scopes, over a per-process cache of each scope's matrix.

A scope's vectors are read once into one contiguous float32 matrix and kept until a write
of this process changes them: the batch API appends its new rows, other writes drop the
scopes they touched. Scores are exact cosines (vectors are stored L2-normalised), computed
with numpy's ``einsum`` loop, which streams a row-major float32 matrix at memory bandwidth
(where BLAS ``gemv`` was 2-3x slower here); large matrices are split across worker
threads, each taking a block of rows, since the product releases the GIL.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.storage.base import Transaction

PARALLEL_VECTOR_ROWS = 10_000
"""From this many rows up, the product runs on the worker threads (one block of rows
each) while the caller's full-text query runs; below, the hand-off costs more than it
saves."""

BLOCK_ROWS = 40_000
"""Rows per block handed to one worker thread."""

WORKERS = 2
"""Worker threads for vector products (the machines Tether targets have few cores)."""

CacheKey = tuple[str, str, tuple[str, ...]]


class ScopeMatrix:
    """One scope set's vectors: ``ids[i]`` is row ``i`` of ``matrix``."""

    __slots__ = ("ids", "matrix")

    def __init__(self, ids: list[str], matrix: Any) -> None:
        self.ids = ids
        self.matrix = matrix

    def __len__(self) -> int:
        return len(self.ids)


class ScopeVectors:
    """The per-process cache of scope matrices and the threads that score them."""

    def __init__(self) -> None:
        self._cache: dict[CacheKey, ScopeMatrix] = {}
        self._lock = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None
        self._workers_pid = 0

    def matrix_txn(
        self, txn: Transaction, tenant: str, embedder_id: str, keys: Sequence[str]
    ) -> ScopeMatrix:
        """The vectors of ``keys`` (scope keys of ``tenant``) under ``embedder_id``."""
        import numpy as np

        cache_key = (tenant, embedder_id, tuple(sorted(keys)))
        cached = self._cache.get(cache_key)
        if cached is None:
            rows = txn.list_scope_vectors(tenant, embedder_id=embedder_id, scopes=list(keys))
            ids = [memory_id for memory_id, _ in rows]
            matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
            matrix = matrix.reshape(len(ids), -1) if ids else matrix.reshape(0, 1)
            cached = ScopeMatrix(ids, np.ascontiguousarray(matrix))
            self._cache[cache_key] = cached
        return cached

    def appended(
        self, tenant: str, embedder_id: str, added: dict[str, tuple[list[str], list[Any]]]
    ) -> None:
        """Rows written (and committed) for scope keys: cached single-scope matrices grow
        by them; cached sets of several scopes that include one are dropped."""
        import numpy as np

        for cache_key in list(self._cache):
            owner, embedder, keys = cache_key
            if owner != tenant or not set(keys) & set(added):
                continue
            if embedder != embedder_id or len(keys) != 1:
                del self._cache[cache_key]
                continue
            ids, vectors = added[keys[0]]
            cached = self._cache[cache_key]
            rows = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
            matrix = rows if not len(cached) else np.concatenate([cached.matrix, rows])
            self._cache[cache_key] = ScopeMatrix(cached.ids + ids, np.ascontiguousarray(matrix))

    def clear(self) -> None:
        self._cache.clear()

    def top_scores(
        self, cached: ScopeMatrix, query: Any, pool: int, *, parallel: bool
    ) -> Callable[[], dict[str, float]]:
        """The ``pool`` best cosines of ``query`` by memory id, exactly.

        With ``parallel`` and a matrix of at least :data:`PARALLEL_VECTOR_ROWS` rows, the
        blocks are scored on the worker threads and this returns at once; call the
        result to wait for the scores.
        """
        import numpy as np

        vector = np.asarray(query, dtype=np.float32)
        if not parallel or len(cached) < PARALLEL_VECTOR_ROWS:
            scores = _best(cached, _scores(cached.matrix, vector), 0, pool)
            return lambda: scores
        workers = self._pool()
        blocks = [
            (start, workers.submit(_scores, cached.matrix[start : start + BLOCK_ROWS], vector))
            for start in range(0, len(cached), BLOCK_ROWS)
        ]

        def gather() -> dict[str, float]:
            best: dict[str, float] = {}
            for start, block in blocks:
                best.update(_best(cached, block.result(), start, pool))
            if len(best) <= pool:
                return best
            return dict(sorted(best.items(), key=lambda item: -item[1])[:pool])

        return gather

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._workers is None or self._workers_pid != os.getpid():
                # A forked child inherits the pool object but not its threads: make its own.
                self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="tether-vectors")
                self._workers_pid = os.getpid()
            return self._workers


def _scores(matrix: Any, vector: Any) -> Any:
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector)


def _best(cached: ScopeMatrix, scores: Any, offset: int, pool: int) -> dict[str, float]:
    import numpy as np

    if len(scores) > pool:
        top = np.argpartition(scores, len(scores) - pool)[-pool:]
    else:
        top = np.arange(len(scores))
    return {cached.ids[offset + int(i)]: float(scores[i]) for i in top}
