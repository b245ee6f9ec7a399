"""Exact vector search within scopes, over a per-process cache of each scope's matrix.

A memory has one vector for its whole text and, when it has several sentences, one per
sentence (:func:`embed_memories`): the sentence's own embedding plus the whole text's,
normalised, so a sentence is read in its memory's context. A memory scores the best
cosine of its vectors, so a long memory is found by the sentence a question is about
(the measured gain is in bench/README.md).

A scope's vectors are read once into one contiguous float32 matrix and kept until a write
of this process changes them: the batch API appends its new rows, other writes drop the
scopes they touched. Scores are exact cosines (vectors are stored L2-normalised), computed
with numpy's ``einsum`` loop, which streams a row-major float32 matrix at memory bandwidth
(BLAS ``gemv`` measured slower on this shape); large matrices are split across worker
threads, each taking a block of rows, since the product releases the GIL.

From :data:`FIRST_PASS_ROWS` rows up, when onnxruntime is installed, a first pass scores
an int8 copy of the matrix instead (:mod:`tether.memory.first_pass`: a quarter of the bytes
per query), and an exact float32 re-score of the rows it cannot rule out, by a bound on its
rounding, gives the same memories and scores as the exact product (``bench/README.md`` has
the figures). The int8 chunks are kept with the matrix and carried over when rows are
appended.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any

from tether.memory import first_pass
from tether.memory.first_pass import CHUNK_ROWS, Chunk, QueryCode
from tether.memory.models import MemoryRecord
from tether.memory.text import scope_key, sentences
from tether.storage.stores import MemoryStore

if TYPE_CHECKING:
    from tether.memory.embeddings import Embedder

PARALLEL_VECTOR_ROWS = 10_000
"""From this many rows up, the product runs on the worker threads (a block of rows each)
while the caller's full-text query runs; below, the hand-off costs more than it saves."""

BLOCK_ROWS = 1_000_000
"""The most rows one worker thread scores in one block."""

BLOCKS_PER_WORKER = 2
"""Blocks per worker thread: the caller takes over the blocks not yet started when its
own full-text query is done, so the cores stay busy to the end."""

WORKERS = 2
"""Worker threads for vector products (the machines Tether targets have few cores)."""

FIRST_PASS_ROWS = 2 * CHUNK_ROWS
"""From this many rows up, the int8 first pass and an exact re-score replace the float32
product over every row (when onnxruntime is installed)."""

SAMPLE_STRIDE = 8
"""Every this-many-th first-pass score of a chunk is read to set the cut of the rows the
chunk re-scores exactly."""

_BUILD_LOCK = threading.Lock()

CacheKey = tuple[str, str, tuple[str, ...]]


class ScopeMatrix:
    """One scope set's vectors: ``ids[i]`` is row ``i`` of ``matrix``; a memory with
    sentence vectors has several rows, at most ``rows_per_memory``. ``versions`` are the
    scopes' write counters the rows were read at."""

    __slots__ = ("_chunks", "_rows", "ids", "matrix", "rows_per_memory", "versions")

    def __init__(
        self,
        ids: list[str],
        matrix: Any,
        versions: tuple[int, ...] = (),
        rows_per_memory: int | None = None,
    ) -> None:
        self.ids = ids
        self.matrix = matrix
        self.versions = versions
        self.rows_per_memory = (
            max(Counter(ids).values(), default=1) if rows_per_memory is None else rows_per_memory
        )
        self._rows: dict[str, list[int]] | None = None
        self._chunks: tuple[Chunk, ...] = ()

    def first_pass(self) -> tuple[Chunk, ...]:
        """The int8 chunks of every full :data:`CHUNK_ROWS` rows, from the first row; the
        chunks not built yet are built now (on first use, and after appends fill one:
        about 2.5 ms per 1,000 rows of 384 dimensions, on top of reading the rows)."""
        full = len(self.ids) // CHUNK_ROWS
        if len(self._chunks) < full:
            with _BUILD_LOCK:
                chunks = list(self._chunks)
                for start in range(len(chunks) * CHUNK_ROWS, full * CHUNK_ROWS, CHUNK_ROWS):
                    chunks.append(Chunk(self.matrix[start : start + CHUNK_ROWS], start))
                self._chunks = tuple(chunks)
        return self._chunks

    def share_first_pass(self, before: ScopeMatrix) -> None:
        """Take over the int8 chunks of ``before`` (this matrix's first rows, unchanged)."""
        self._chunks = before._chunks

    def rows_of(self, memory_id: str) -> list[int]:
        """The row numbers of ``memory_id`` (none if it has no vector here); the index is
        built on first use and kept with the matrix."""
        if self._rows is None:
            rows: dict[str, list[int]] = {}
            for row, owner in enumerate(self.ids):
                rows.setdefault(owner, []).append(row)
            self._rows = rows
        return [row for row in self._rows.get(memory_id, []) if row < len(self.ids)]

    def extend_rows(self, before: ScopeMatrix, added: list[str]) -> None:
        """Take over the row index of ``before`` (this matrix's first rows) if it was built,
        extended by the ``added`` rows: a write does not cost the next recall a rebuild.
        The index is shared, so each matrix reads only the rows it has."""
        if before._rows is None:
            return
        offset = len(before.ids)
        for row, owner in enumerate(added, start=offset):
            before._rows.setdefault(owner, []).append(row)
        self._rows = before._rows

    def __len__(self) -> int:
        return len(self.ids)

    def scores_of(self, query: Any, memory_ids: Sequence[str]) -> dict[str, float]:
        """The cosines of ``query`` with the named memories (each by its best row), for
        candidates the full-text search found outside the vector search's best: recall
        then weighs every candidate by both its scores, not only the vector's own pool."""
        import numpy as np

        rows = {m: self.rows_of(m) for m in memory_ids}
        wanted = [row for found in rows.values() for row in found]
        if not wanted:
            return {}
        scores = self.matrix[wanted] @ np.asarray(query, dtype=np.float32)
        out: dict[str, float] = {}
        cursor = 0
        for memory_id, found in rows.items():
            if found:
                out[memory_id] = float(scores[cursor : cursor + len(found)].max())
                cursor += len(found)
        return out


class ScopeVectors:
    """The per-process cache of scope matrices and the threads that score them.

    Every write of a scope's vectors, by any process, bumps the scope's counter in the
    database (``bump_scope_vectors``); a cached matrix read at other counters than the
    scopes have now is read again, so a memory another worker wrote is found by its
    vector too. The batch API appends its own rows when no other write came between.
    """

    def __init__(self) -> None:
        self._cache: dict[CacheKey, ScopeMatrix] = {}
        self._lock = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None
        self._workers_pid = 0

    def matrix_txn(
        self, txn: MemoryStore, tenant: str, embedder_id: str, keys: Sequence[str]
    ) -> ScopeMatrix:
        """The vectors of ``keys`` (scope keys of ``tenant``) under ``embedder_id``."""
        import numpy as np

        scopes = tuple(sorted(keys))
        cache_key = (tenant, embedder_id, scopes)
        counters = txn.scope_vector_versions(tenant, scopes)
        versions = tuple(counters.get(scope, 0) for scope in scopes)
        cached = self._cache.get(cache_key)
        if cached is None or cached.versions != versions:
            rows = txn.list_scope_vectors(tenant, embedder_id=embedder_id, scopes=list(scopes))
            ids = [memory_id for memory_id, _ in rows]
            matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
            matrix = matrix.reshape(len(ids), -1) if ids else matrix.reshape(0, 1)
            cached = ScopeMatrix(ids, np.ascontiguousarray(matrix), versions)
            self._cache[cache_key] = cached
        return cached

    def appended(
        self,
        tenant: str,
        embedder_id: str,
        added: Stored,
        versions: dict[str, int],
    ) -> None:
        """Rows one write transaction stored (and committed) for scope keys, and the
        scopes' counters after its one bump each: a cached single-scope matrix read just
        before that bump grows by the rows; any other cached matrix of those scopes is
        dropped (read again when next needed)."""
        import numpy as np

        for cache_key in list(self._cache):
            owner, embedder, keys = cache_key
            if owner != tenant or not set(keys) & set(added):
                continue
            cached = self._cache.get(cache_key)  # another thread may have dropped it
            key = keys[0]
            current = versions.get(key, 0)
            if cached is None:
                continue
            if embedder != embedder_id or len(keys) != 1 or cached.versions != (current - 1,):
                self._cache.pop(cache_key, None)
                continue
            ids, vectors = added[key]
            rows = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
            matrix = rows if not len(cached) else np.concatenate([cached.matrix, rows])
            # The rows are new memories': the busiest memory is an old one or one of them.
            most = max(cached.rows_per_memory, *Counter(ids).values())
            grown = ScopeMatrix(cached.ids + ids, np.ascontiguousarray(matrix), (current,), most)
            grown.extend_rows(cached, ids)
            grown.share_first_pass(cached)
            self._cache[cache_key] = grown

    def top_scores(
        self, cached: ScopeMatrix, query: Any, pool: int
    ) -> Callable[[], dict[str, float]]:
        """The ``pool`` best cosines of ``query`` by memory id, exactly.

        A matrix of at least :data:`PARALLEL_VECTOR_ROWS` rows is cut into blocks
        (:data:`BLOCKS_PER_WORKER` per worker thread, at most :data:`BLOCK_ROWS` rows
        each), each scored and cut to its own best ``pool`` on a worker, and this returns
        at once, so the caller's full-text query runs meanwhile; calling the result scores
        the blocks no worker has started yet on the caller's thread and waits for the
        rest. From :data:`FIRST_PASS_ROWS` rows up (onnxruntime installed) the blocks are
        the int8 chunks, each scored by the first pass and its best rows re-scored
        exactly, and the rows past the last chunk; then the rows the first pass's bound
        cannot rule out are re-scored too (:func:`_exact_rest`).
        """
        import numpy as np

        vector = np.asarray(query, dtype=np.float32)
        rows = len(cached)
        if not rows:
            return dict
        best_rows = pool * cached.rows_per_memory
        if rows < PARALLEL_VECTOR_ROWS:
            found = _block_best(cached.matrix, vector, 0, best_rows)
            return lambda: _by_id(cached, [found], pool)
        jobs: list[Callable[[], _Scored]] = []
        start = 0
        if rows >= FIRST_PASS_ROWS and first_pass.available():
            code = QueryCode(vector)
            chunks = cached.first_pass()
            for chunk in chunks:
                jobs.append(partial(_chunk_best, chunk, cached.matrix, vector, code, best_rows))
            start = len(chunks) * CHUNK_ROWS
            size = max(rows - start, 1)
        else:
            size = min(BLOCK_ROWS, -(-rows // (WORKERS * BLOCKS_PER_WORKER)))
        for offset in range(start, rows, size):
            block = cached.matrix[offset : offset + size]
            jobs.append(partial(_block_scored, block, vector, offset, best_rows))
        workers = self._pool()
        futures = [workers.submit(job) for job in jobs]

        def gather() -> dict[str, float]:
            # The caller, done with its own query, scores the blocks no worker has
            # started yet (from the last one back) instead of waiting for them.
            found = []
            for job, future in reversed(list(zip(jobs, futures, strict=True))):
                found.append(job() if future.cancel() else future.result())
            return _exact_rest(cached, vector, found, pool)

        return gather

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._workers is None or self._workers_pid != os.getpid():
                # A forked child inherits the pool object but not its threads: make its own.
                self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="tether-vectors")
                self._workers_pid = os.getpid()
            return self._workers


def _block_best(matrix: Any, vector: Any, offset: int, pool: int) -> tuple[Any, Any]:
    """Row numbers (from ``offset``) and cosines of the block's ``pool`` best rows."""
    import numpy as np

    scores = np.einsum("ij,j->i", matrix, vector)
    if len(scores) > pool:
        top = np.argpartition(scores, len(scores) - pool)[-pool:]
        return top + offset, scores[top]
    return np.arange(offset, offset + len(scores)), scores


_Scored = tuple[Any, Any, Any, float, int]
"""A block's re-scored rows (numbered from the matrix's first row), their exact cosines,
and for an int8 chunk the first-pass scores of all its rows, their bound and the chunk's
first row (``None``, 0.0 and 0 for a float32 block)."""


def _block_scored(matrix: Any, vector: Any, offset: int, pool: int) -> _Scored:
    rows, scores = _block_best(matrix, vector, offset, pool)
    return rows, scores, None, 0.0, 0


def _chunk_best(chunk: Chunk, matrix: Any, vector: Any, code: QueryCode, pool: int) -> _Scored:
    """The chunk's best rows by the first pass (at least ``pool``: those at or above a cut
    read from every :data:`SAMPLE_STRIDE`-th score, about twice ``pool``; or the ``pool``
    best if the cut finds too few or too many), re-scored exactly, with the first pass's
    scores of all its rows and their bound."""
    import numpy as np

    approx = chunk.scores(code)
    if len(approx) <= pool:
        picked = np.arange(len(approx))
    else:
        sample = approx[::SAMPLE_STRIDE]
        rank = min(len(sample), pool * 2 // SAMPLE_STRIDE + 1)
        cut = np.partition(sample, len(sample) - rank)[len(sample) - rank]
        picked = np.flatnonzero(approx >= cut)
        if not pool <= len(picked) <= 4 * pool:
            picked = np.sort(np.argpartition(approx, len(approx) - pool)[-pool:])
    rows = picked + chunk.start
    exact = np.einsum("ij,j->i", matrix[rows], vector)
    return rows, exact, approx, chunk.bound(code), chunk.start


def _exact_rest(
    cached: ScopeMatrix, vector: Any, found: list[_Scored], pool: int
) -> dict[str, float]:
    """The ``pool`` best memories, exactly: the ``pool``-th best memory among the rows
    re-scored so far is a threshold no memory of the best ``pool`` is below; every row of
    a chunk whose first-pass score is within the chunk's bound of it is re-scored too
    (exactly, as :func:`_block_best` scores), so no row left out can reach it."""
    import numpy as np

    scored = [(rows, scores) for rows, scores, _, _, _ in found]
    best = _by_id(cached, scored, pool)
    threshold = min(best.values()) if len(best) >= pool else -np.inf
    more = False
    for rows, _, approx, bound, start in found:
        if approx is None:
            continue
        wanted = approx >= threshold - bound
        wanted[rows - start] = False
        rest = np.flatnonzero(wanted)
        if len(rest):
            rest += start
            scored.append((rest, np.einsum("ij,j->i", cached.matrix[rest], vector)))
            more = True
    return _by_id(cached, scored, pool) if more else best


def _by_id(cached: ScopeMatrix, found: list[tuple[Any, Any]], pool: int) -> dict[str, float]:
    """The ``pool`` best memories of the blocks' best rows, each by its best row (ties by
    memory id)."""
    import numpy as np

    if not found:
        return {}
    rows = np.concatenate([block_rows for block_rows, _ in found])
    scores = np.concatenate([block_scores for _, block_scores in found])
    best: dict[str, float] = {}
    last = 0.0
    # Best row first: a memory's first row is its best; past the pool-th memory, only the
    # memories tied with it are still read, for the tie-break by id.
    for index in np.argsort(-scores, kind="stable"):
        score = float(scores[index])
        if len(best) >= pool and score < last:
            break
        memory_id = cached.ids[int(rows[index])]
        if memory_id not in best:
            best[memory_id] = last = score
    if len(best) <= pool:
        return best
    return dict(sorted(best.items(), key=lambda item: (-item[1], item[0]))[:pool])


class Embedded:
    """The vectors of a batch of memory texts: ``whole[i]`` for text ``i`` and
    ``parts[i]``, its sentence vectors (none for a text of one sentence)."""

    __slots__ = ("parts", "whole")

    def __init__(self, whole: Any, parts: list[list[Any]]) -> None:
        self.whole = whole
        self.parts = parts


Stored = dict[str, tuple[list[str], list[Any]]]
"""Vectors written, by scope key: the memory id of each row and the row."""


def store_vectors_txn(
    txn: MemoryStore,
    tenant: str,
    embedder: Embedder,
    memories: Sequence[tuple[MemoryRecord, list[Any]]],
) -> tuple[Stored, dict[str, int]]:
    """Store each memory's vectors (its whole text's first, then its sentences', which
    replace any it had) under ``embedder`` and bump the scopes' counters, once each.

    Returns what was stored by scope key, and the scopes' counters after the bump (for
    :meth:`ScopeVectors.appended`).
    """
    dim = int(embedder.dim)
    stored: Stored = {}
    for record, vectors in memories:
        ids, kept = stored.setdefault(scope_key(record.scope, record.scope_id), ([], []))
        ids.extend([record.memory_id] * len(vectors))
        kept.extend(vectors)
    txn.upsert_memory_vectors(
        tenant, embedder.id, dim, [(r.memory_id, vectors[0].tobytes()) for r, vectors in memories]
    )
    txn.replace_memory_part_vectors(
        tenant,
        embedder.id,
        dim,
        [(r.memory_id, [v.tobytes() for v in vectors[1:]]) for r, vectors in memories],
    )
    txn.bump_scope_vectors(tenant, list(stored))
    return stored, txn.scope_vector_versions(tenant, list(stored))


def embed_memories(embedder: Embedder, texts: Sequence[str]) -> Embedded:
    """Embed memory texts and their sentences in one call to the embedder."""
    import numpy as np

    if not texts:
        return Embedded(np.zeros((0, int(embedder.dim)), dtype=np.float32), [])
    split = [sentences(text) for text in texts]
    flat = [part for parts in split for part in parts]
    vectors = embedder.embed([*texts, *flat])
    whole = vectors[: len(texts)]
    parts: list[list[Any]] = []
    cursor = len(texts)
    for index, sentence_list in enumerate(split):
        own = []
        for offset in range(len(sentence_list)):
            combined = vectors[cursor + offset] + whole[index]
            own.append((combined / max(float(np.linalg.norm(combined)), 1e-12)).astype(np.float32))
        parts.append(own)
        cursor += len(sentence_list)
    return Embedded(whole, parts)
