"""An int8 copy of a large scope matrix, for a cheap first pass of the vector search.

The exact search reads every float32 row of a scope for every query (100,000 rows of 384
dimensions are 154 MB). This module keeps, beside the float32 matrix, each row rounded to
int8 with its own scale, in chunks of :data:`CHUNK_ROWS` rows, each chunk scored by one
onnxruntime ``MatMulInteger`` on its prepacked int8 rows (a quarter of the bytes, read by
integer kernels). The query is rounded too, to seven bits (``|code| <= 63``): then no
pair of products can overflow the 16-bit sums some x86 kernels add them in.

A first-pass score is not the cosine, but its distance from it is bounded (per chunk,
per query, see :meth:`Chunk.bound`), and :mod:`tether.memory.vectors` uses the bound to
make the search exact: it re-scores exactly (float32, the same ``einsum`` as the exact
search, so the same bits) the best rows of each chunk by the first pass, takes the
``pool``-th best memory among them as a threshold, then re-scores every other row whose
first-pass score plus the bound reaches that threshold; no row left out can be in the
best ``pool``. So the memories and scores returned are those of the exact search.

The bound, for a row ``x`` with scale ``s`` and codes ``c`` (``x = s*c + d``) and the
query ``q`` with scale ``t`` and codes ``k`` (``q = t*k + e``): the cosine is
``s*t*(c . k) + q . d + s*(c . e)``, so its distance from the first pass is at most
``|q|*|d| + |s*c|*|e|`` (Cauchy-Schwarz), plus float32 rounding.

onnxruntime comes with the ``embeddings`` extra; without it (an application's own
embedder on numpy alone) :func:`available` is false and the search stays on float32 rows.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from tether.memory.onnx_int8 import _bytes_field, _int_field, _node, _text_field

CHUNK_ROWS = 16_384
"""Rows of one int8 chunk (one onnxruntime session). Rows past the last full chunk are
scored in float32 until the chunk they start is full."""

QUERY_LEVELS = 63
"""The query's largest code: seven bits, so that ``255 * 127 * 2`` never comes up."""

ROUNDING = 2.0**-22
"""Per dimension, relative to the norms: added to a bound for float32 rounding in both
products (four times the classic ``dim * 2**-24`` bound of a float32 dot product)."""

_MODEL_IR_VERSION, _MODEL_GRAPH, _MODEL_OPSET = 1, 7, 8
_GRAPH_NAME, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT = 2, 5, 11, 12
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME = 1, 2, 8
_TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION, _EXTERNAL = 13, 14, 1
_VALUE_NAME, _VALUE_TYPE, _TYPE_TENSOR, _TENSOR_ELEM_TYPE = 1, 2, 1, 1
_UINT8, _INT8, _INT32 = 2, 3, 6

_lock = threading.Lock()
_onnxruntime: Any = None
_checked = False


def _runtime() -> Any:
    """onnxruntime, or ``None`` when it is not installed (imported once)."""
    global _onnxruntime, _checked
    with _lock:
        if not _checked:
            try:
                _onnxruntime = importlib.import_module("onnxruntime")
            except ImportError:
                _onnxruntime = None
            _checked = True
        return _onnxruntime


def available() -> bool:
    """Whether the int8 first pass can run here (onnxruntime is installed)."""
    return _runtime() is not None


def _value(name: str, elem_type: int) -> bytes:
    tensor = _int_field(_TENSOR_ELEM_TYPE, elem_type)
    return _text_field(_VALUE_NAME, name) + _bytes_field(
        _VALUE_TYPE, _bytes_field(_TYPE_TENSOR, tensor)
    )


def _model(dim: int, rows: int) -> bytes:
    """``y = (a - a_zero) @ b``: ``a`` the query's uint8 codes (1 x dim), ``b`` the chunk's
    int8 rows transposed (dim x rows), an initializer handed over from memory (its bytes
    are never copied into the model)."""
    external = _text_field(1, "location") + _text_field(2, "rows.bin")
    rows_tensor = (
        _int_field(_TENSOR_DIMS, dim)
        + _int_field(_TENSOR_DIMS, rows)
        + _int_field(_TENSOR_DATA_TYPE, _INT8)
        + _text_field(_TENSOR_NAME, "b")
        + _bytes_field(_TENSOR_EXTERNAL_DATA, external)
        + _int_field(_TENSOR_DATA_LOCATION, _EXTERNAL)
    )
    graph = _node("MatMulInteger", ["a", "b", "a_zero"], ["y"], "first_pass")
    graph += _text_field(_GRAPH_NAME, "tether_first_pass")
    graph += _bytes_field(_GRAPH_INITIALIZER, rows_tensor)
    graph += _bytes_field(_GRAPH_INPUT, _value("a", _UINT8))
    graph += _bytes_field(_GRAPH_INPUT, _value("a_zero", _UINT8))
    graph += _bytes_field(_GRAPH_OUTPUT, _value("y", _INT32))
    opset = _text_field(1, "") + _int_field(2, 13)
    return (
        _int_field(_MODEL_IR_VERSION, 8)
        + _bytes_field(_MODEL_GRAPH, graph)
        + _bytes_field(_MODEL_OPSET, opset)
    )


class QueryCode:
    """A query rounded for the first pass: ``feeds`` for the sessions, its ``scale``, and
    the norms of the query and of its rounding error."""

    __slots__ = ("error", "feeds", "norm", "scale")

    def __init__(self, vector: Any) -> None:
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        top = float(np.abs(query).max()) if len(query) else 0.0
        self.scale = top / QUERY_LEVELS if top > 0 else 1.0
        codes = np.clip(np.rint(query / self.scale), -QUERY_LEVELS, QUERY_LEVELS)
        self.norm = float(np.linalg.norm(query.astype(np.float64)))
        self.error = float(np.linalg.norm(query.astype(np.float64) - self.scale * codes))
        self.feeds = {
            "a": (codes + QUERY_LEVELS + 1).astype(np.uint8).reshape(1, -1),
            "a_zero": np.array(QUERY_LEVELS + 1, dtype=np.uint8),
        }


class Chunk:
    """Rows ``start`` to ``start + rows`` of a scope matrix in int8, with each row's scale,
    the largest norm of a row's rounding error and of a rounded row, and the onnxruntime
    session that scores them (it holds them prepacked; ``_codes`` stays alive beside it
    because the session was handed that memory)."""

    __slots__ = (
        "_codes",
        "_session",
        "dim",
        "largest_error",
        "largest_norm",
        "rows",
        "scales",
        "start",
    )

    def __init__(self, matrix: Any, start: int) -> None:
        import numpy as np

        runtime = _runtime()
        block = np.asarray(matrix, dtype=np.float32)
        self.start = start
        self.rows, self.dim = int(block.shape[0]), int(block.shape[1])
        top = np.abs(block).max(axis=1)
        scales = np.where(top > 0, top / 127, 1).astype(np.float32)
        codes = block / scales[:, None]
        np.rint(codes, out=codes)
        np.clip(codes, -127, 127, out=codes)
        self.scales = scales
        self._codes = np.ascontiguousarray(codes.astype(np.int8).T)
        codes *= scales[:, None]  # the rows as the first pass reads them
        self.largest_norm = float(np.sqrt(np.einsum("ij,ij->i", codes, codes).max()))
        np.subtract(block, codes, out=codes)  # each row's rounding error
        self.largest_error = float(np.sqrt(np.einsum("ij,ij->i", codes, codes).max()))
        options = runtime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.graph_optimization_level = runtime.GraphOptimizationLevel.ORT_DISABLE_ALL
        value = runtime.OrtValue.ortvalue_from_numpy(self._codes)
        options.add_external_initializers(["b"], [value])
        self._session = runtime.InferenceSession(
            _model(self.dim, self.rows), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def scores(self, code: QueryCode) -> Any:
        """The first-pass scores of the chunk's rows (one per row: the int32 products
        times the row's and the query's scales, in float64)."""
        products = self._session.run(None, code.feeds)[0].reshape(-1)
        return products * (self.scales * code.scale)

    def bound(self, code: QueryCode) -> float:
        """How far a first-pass score of this chunk can be from the row's cosine."""
        return (
            code.norm * self.largest_error
            + self.largest_norm * code.error
            + ROUNDING * self.dim * code.norm * (self.largest_norm + self.largest_error)
        )
