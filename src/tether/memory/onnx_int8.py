"""The pinned MiniLM graph rewritten, in memory, so that its weight products run on int8.

The model file stores int8 weights with one float scale per output column, and
onnxruntime dequantises them to float32 at load: every weight product then runs in
float32. :func:`int8_compute_graph` rewrites the verified bytes so that those products run
on onnxruntime's integer kernels instead, which costs much less CPU per text
(``bench/README.md`` has the figures and the recall they give).

Why a rewrite of our own rather than onnxruntime's quantisation tools
(``onnxruntime.quantization.quantize_dynamic``): they need the ``onnx`` package, which
the ``embeddings`` extra does not install, and they quantise a product's input with one
scale for the whole tensor, that is for the whole batch, so a text's vector would change
with the texts embedded beside it and would move further from float compute than this
rewrite does (``bench/README.md``). Here each token's activations get their own scale and
zero point, and the products use the file's own int8 weights, shifted to uint8 (each
weight plus 128, zero point 128).

Why uint8 by uint8 where the CPU has no VNNI: onnxruntime's uint8-by-int8 kernel on
CPUs without VNNI (AVX2 only) adds pairs of products in 16 bits and saturates (255 · 127
· 2 does not fit), so the same text got a different vector on such a CPU (cosine to float
compute as low as 0.89) than on one with VNNI. Its uint8-by-uint8 kernels widen to 16
bits before they multiply: every product is exact on every CPU. Where the CPU has VNNI
(:func:`signed_products_exact`), the uint8-by-int8 kernel adds four products at a time
straight into 32 bits, exact too, and it is about 1.7 times as fast as uint8 by uint8
there (``bench/README.md``): the weights are then kept as the file stores them. Both give
the same vector to the bit (``tests/unit/test_embeddings_int8.py``), so a vector does
not depend on the machine it was computed on, and the embedder's id is the same.

The model file is ONNX: a protocol-buffers message. Only the few fields read or written
below are decoded (field numbers from onnx.proto); every other byte is copied as it is,
so the rewrite needs no package beyond numpy and is the same on every machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tether.errors import ConfigError

INT8_COMPUTE_VERSION = 1
"""Version of :func:`int8_compute_graph`; part of the int8 embedder's id."""

_WIRE_VARINT, _WIRE_FIXED64, _WIRE_BYTES, _WIRE_FIXED32 = 0, 1, 2, 5
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_VALUE_INFO = 1, 5, 13
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = (
    1,
    2,
    3,
    4,
    5,
    7,
)
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME, _TENSOR_RAW_DATA = 1, 2, 8, 9
_ATTR_NAME, _ATTR_INT, _ATTR_INTS, _ATTR_TYPE = 1, 3, 8, 20
_ATTR_TYPE_INT, _ATTR_TYPE_INTS = 2, 7
_FLOAT, _UINT8, _INT8, _INT64 = 1, 2, 3, 7
_INT8_MATMULS = 36
"""Weight matrix products of all-MiniLM-L6-v2 (6 layers: Q, K, V, output, 2 feed-forward)."""
_PREFIX = "tether_i8"


def _read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _proto_fields(buf: memoryview) -> Iterator[tuple[int, int | memoryview, memoryview]]:
    """``(field number, value, the field's whole record)`` for each field of a message."""
    pos, end = 0, len(buf)
    while pos < end:
        start = pos
        key, pos = _read_varint(buf, pos)
        wire = key & 7
        value: int | memoryview
        if wire == _WIRE_VARINT:
            value, pos = _read_varint(buf, pos)
        elif wire == _WIRE_BYTES:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        elif wire in (_WIRE_FIXED64, _WIRE_FIXED32):
            size = 8 if wire == _WIRE_FIXED64 else 4
            value, pos = buf[pos : pos + size], pos + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield key >> 3, value, buf[start:pos]


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values are sent as ten-byte two's complement
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _bytes_field(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | _WIRE_BYTES) + _varint(len(data)) + data


def _int_field(field: int, value: int) -> bytes:
    return _varint(field << 3 | _WIRE_VARINT) + _varint(value)


def _text_field(field: int, text: str) -> bytes:
    return _bytes_field(field, text.encode("utf-8"))


def _int_attr(name: str, value: int) -> bytes:
    return (
        _text_field(_ATTR_NAME, name)
        + _int_field(_ATTR_INT, value)
        + _int_field(_ATTR_TYPE, _ATTR_TYPE_INT)
    )


def _ints_attr(name: str, values: Sequence[int]) -> bytes:
    items = b"".join(_int_field(_ATTR_INTS, value) for value in values)
    return _text_field(_ATTR_NAME, name) + items + _int_field(_ATTR_TYPE, _ATTR_TYPE_INTS)


def _node(
    op: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str,
    attributes: Sequence[bytes] = (),
    domain: str = "",
) -> bytes:
    body = b"".join(_text_field(_NODE_INPUT, item) for item in inputs)
    body += b"".join(_text_field(_NODE_OUTPUT, item) for item in outputs)
    body += _text_field(_NODE_NAME, name) + _text_field(_NODE_OP_TYPE, op)
    body += b"".join(_bytes_field(_NODE_ATTRIBUTE, attribute) for attribute in attributes)
    if domain:
        body += _text_field(_NODE_DOMAIN, domain)
    return _bytes_field(_GRAPH_NODE, body)


def _initializer(name: str, array: Any) -> bytes:
    import numpy as np

    data_type = {"float32": _FLOAT, "int64": _INT64, "uint8": _UINT8, "int8": _INT8}[
        str(array.dtype)
    ]
    body = b"".join(_int_field(_TENSOR_DIMS, int(dim)) for dim in array.shape)
    body += _int_field(_TENSOR_DATA_TYPE, data_type) + _text_field(_TENSOR_NAME, name)
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    body += _bytes_field(_TENSOR_RAW_DATA, little.tobytes())
    return _bytes_field(_GRAPH_INITIALIZER, body)


@dataclass
class _Node:
    record: memoryview
    inputs: list[str]
    outputs: list[str]
    name: str
    op: str
    domain: str


@dataclass
class _Tensor:
    dims: list[int]
    data_type: int
    raw: memoryview | None


def _decode_node(record: memoryview, body: memoryview) -> _Node:
    node = _Node(record, [], [], "", "", "")
    for field, value, _ in _proto_fields(body):
        if not isinstance(value, memoryview):
            continue
        if field == _NODE_INPUT:
            node.inputs.append(str(value, "utf-8"))
        elif field == _NODE_OUTPUT:
            node.outputs.append(str(value, "utf-8"))
        elif field == _NODE_NAME:
            node.name = str(value, "utf-8")
        elif field == _NODE_OP_TYPE:
            node.op = str(value, "utf-8")
        elif field == _NODE_DOMAIN:
            node.domain = str(value, "utf-8")
    return node


def _decode_tensor(body: memoryview) -> tuple[str, _Tensor]:
    name, tensor = "", _Tensor([], 0, None)
    for field, value, _ in _proto_fields(body):
        if field == _TENSOR_DIMS:
            if isinstance(value, int):
                tensor.dims.append(value)
            else:  # packed
                pos = 0
                while pos < len(value):
                    dim, pos = _read_varint(value, pos)
                    tensor.dims.append(dim)
        elif field == _TENSOR_DATA_TYPE and isinstance(value, int):
            tensor.data_type = value
        elif field == _TENSOR_NAME and isinstance(value, memoryview):
            name = str(value, "utf-8")
        elif field == _TENSOR_RAW_DATA and isinstance(value, memoryview):
            tensor.raw = value
    return name, tensor


def _value_info_name(body: memoryview) -> str:
    for field, value, _ in _proto_fields(body):
        if field == 1 and isinstance(value, memoryview):
            return str(value, "utf-8")
    return ""


def _shifted(quantized: Any) -> Any:
    """int8 weights as uint8 with zero point 128 (each plus 128)."""
    import numpy as np

    return (quantized.astype(np.int16) + 128).astype(np.uint8)


def _int8_product(
    node: _Node, weights: str, scale: str, tensors: dict[str, _Tensor], signed: bool
) -> tuple[bytes, bytes]:
    """Nodes and initializers computing ``node`` (``A @ (float(Wq) * scale)``) on int8.

    Each row of ``A`` (one token's activations) is quantised on its own to uint8 with its
    own scale and zero point (from the row's minimum and maximum, zero included), so a
    text's vector never depends on the other texts of its batch. ``MatMulIntegerToFloat``
    multiplies the uint8 rows by the weights (stored as uint8 with zero point 128, so the
    kernel is exact on every CPU, or, ``signed``, as the file's int8: see the module's
    docstring) and applies the weights'
    per-column scales; the rows' scales and zero points are applied after it:
    ``Y = s_row * (Z - zp_row * colsum(Wq) * scale)``.

    Raises:
        ConfigError: a tensor the product needs is not stored as raw bytes.
    """
    import numpy as np

    tensor, column_scale = tensors[weights], tensors[scale]
    if tensor.raw is None or column_scale.raw is None:
        raise ConfigError(
            f"int8 compute: the weights {weights!r} or their scales {scale!r} of "
            f"{node.name or node.outputs!r} hold no raw data; only the pinned model file "
            "can be rewritten"
        )
    rows, columns = tensor.dims
    quantized = np.frombuffer(tensor.raw, dtype=np.int8).reshape(rows, columns)
    scales = np.frombuffer(column_scale.raw, dtype="<f4").astype(np.float32).reshape(columns)
    column_sums = quantized.sum(axis=0, dtype=np.int64).astype(np.float32)
    (activations,) = node.inputs[:1]
    (product,) = node.outputs
    p = f"{_PREFIX}/{node.name or product}"
    shared = f"{_PREFIX}/"
    nodes = [
        _node("Shape", [activations], [p + "/lead"], p + "/Shape", [_int_attr("end", -1)]),
        _node(
            "Concat", [p + "/lead", p + "/n"], [p + "/shape"], p + "/Concat", [_int_attr("axis", 0)]
        ),
        _node("Reshape", [activations, p + "/rows_k"], [p + "/a"], p + "/Reshape"),
        _node(
            "ReduceMax",
            [p + "/a"],
            [p + "/max"],
            p + "/ReduceMax",
            [_ints_attr("axes", [1]), _int_attr("keepdims", 0)],
        ),
        _node(
            "ReduceMin",
            [p + "/a"],
            [p + "/min"],
            p + "/ReduceMin",
            [_ints_attr("axes", [1]), _int_attr("keepdims", 0)],
        ),
        _node("Max", [p + "/max", shared + "zero"], [p + "/hi"], p + "/Hi"),
        _node("Min", [p + "/min", shared + "zero"], [p + "/lo"], p + "/Lo"),
        _node("Sub", [p + "/hi", p + "/lo"], [p + "/range"], p + "/Range"),
        _node("Mul", [p + "/range", shared + "inv255"], [p + "/step"], p + "/Step"),
        _node("Max", [p + "/step", shared + "tiny"], [p + "/s"], p + "/Scale"),
        _node("Neg", [p + "/lo"], [p + "/neg_lo"], p + "/NegLo"),
        _node("Div", [p + "/neg_lo", p + "/s"], [p + "/zp_exact"], p + "/ZeroPointExact"),
        _node("Round", [p + "/zp_exact"], [p + "/zp_float"], p + "/ZeroPointRound"),
        _node("Cast", [p + "/zp_float"], [p + "/zp"], p + "/ZeroPoint", [_int_attr("to", _UINT8)]),
        _node(
            "QuantizeLinear",
            [p + "/a", p + "/s", p + "/zp"],
            [p + "/aq"],
            p + "/Quantize",
            [_int_attr("axis", 0)],
        ),
        _node(
            "MatMulIntegerToFloat",
            [p + "/aq", p + "/w_q", shared + "one", p + "/w_scale", "", shared + "w_zp"],
            [p + "/z"],
            p + "/MatMulIntegerToFloat",
            domain="com.microsoft",
        ),
        _node("Unsqueeze", [p + "/s", shared + "axis1"], [p + "/s_col"], p + "/ScaleColumn"),
        _node("Mul", [p + "/s", p + "/zp_float"], [p + "/s_zp"], p + "/ScaledZeroPoint"),
        _node("Unsqueeze", [p + "/s_zp", shared + "axis1"], [p + "/s_zp_col"], p + "/ZpColumn"),
        _node("Mul", [p + "/z", p + "/s_col"], [p + "/scaled"], p + "/ApplyScale"),
        _node("Mul", [p + "/s_zp_col", p + "/w_offset"], [p + "/offset"], p + "/Offset"),
        _node("Sub", [p + "/scaled", p + "/offset"], [p + "/y"], p + "/RemoveOffset"),
        _node("Reshape", [p + "/y", p + "/shape"], [product], p + "/ReshapeBack"),
    ]
    initializers = [
        _initializer(p + "/n", np.array([columns], dtype=np.int64)),
        _initializer(p + "/rows_k", np.array([-1, rows], dtype=np.int64)),
        _initializer(p + "/w_q", quantized if signed else _shifted(quantized)),
        _initializer(p + "/w_scale", scales),
        _initializer(p + "/w_offset", (column_sums * scales).reshape(1, columns)),
    ]
    return b"".join(nodes), b"".join(initializers)


_VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


def signed_products_exact(cpuinfo: str | None = None) -> bool:
    """Whether onnxruntime's uint8-by-int8 product is exact on this CPU: an x86 CPU with
    VNNI (``avx512_vnni``, ``avx_vnni`` or AMX in the flags of ``/proc/cpuinfo``, or of
    ``cpuinfo`` when given). Where this cannot be read (another system, another
    architecture) the answer is no, and the uint8-by-uint8 product, exact everywhere, is
    used."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
                cpuinfo = handle.read()
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return not _VNNI_FLAGS.isdisjoint(value.split())
    return False


def int8_compute_graph(model: bytes, *, signed: bool = False) -> bytes:
    """The pinned MiniLM graph rewritten so that its weight products run on int8 kernels.

    In the file every weight matrix is ``Mul(Cast(Wq), scale)``: int8 values with one
    float scale per output column. onnxruntime folds that into a float32 matrix at load
    and multiplies in float32. Here each ``MatMul(A, Mul(Cast(Wq), scale))`` becomes a
    per-row dynamic quantisation of ``A`` and an integer product against ``Wq`` itself
    (see :func:`_int8_product`); the cast and scale nodes it used go. Everything else, the
    embeddings tables and the attention products included, is left as it is.

    ``signed``: the products take the file's int8 weights as they are (uint8 by int8,
    exact only where :func:`signed_products_exact`); otherwise the weights are shifted to
    uint8 (uint8 by uint8, exact on every CPU). Both give the same vectors.

    Deterministic (same bytes in, same bytes out) and in memory: nothing is written.

    Raises:
        ConfigError: the graph does not have the pinned model's shape (a model Tether has
            not pinned reached this point: a bug, since the caller checks the digest).
    """
    try:
        return _int8_compute_graph(memoryview(model), signed)
    except (IndexError, ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"int8 compute: the model file is not a readable graph ({exc})") from exc


def _int8_compute_graph(buf: memoryview, signed: bool) -> bytes:
    top = list(_proto_fields(buf))
    graphs = [value for field, value, _ in top if field == _MODEL_GRAPH]
    if len(graphs) != 1 or not isinstance(graphs[0], memoryview):
        raise ConfigError("int8 compute: the model file holds no single graph")
    graph_fields = list(_proto_fields(graphs[0]))
    nodes: list[_Node] = []
    tensors: dict[str, _Tensor] = {}
    for field, value, record in graph_fields:
        if field == _GRAPH_NODE and isinstance(value, memoryview):
            nodes.append(_decode_node(record, value))
        elif field == _GRAPH_INITIALIZER and isinstance(value, memoryview):
            name, tensor = _decode_tensor(value)
            tensors[name] = tensor
    producer = {output: node for node in nodes for output in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes:
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1

    rewrites: dict[int, tuple[str, str]] = {}
    dropped: set[int] = set()
    for node in nodes:
        if node.op != "MatMul" or node.domain or len(node.inputs) != 2:
            continue
        scale_node = producer.get(node.inputs[1])
        if scale_node is None or scale_node.op != "Mul" or uses[node.inputs[1]] != 1:
            continue
        cast_node = producer.get(scale_node.inputs[0])
        if cast_node is None or cast_node.op != "Cast" or uses[scale_node.inputs[0]] != 1:
            continue
        weights, scale = cast_node.inputs[0], scale_node.inputs[1]
        matrix, column_scale = tensors.get(weights), tensors.get(scale)
        if (
            matrix is None
            or column_scale is None
            or matrix.data_type != _INT8
            or matrix.raw is None
            or len(matrix.dims) != 2
            or column_scale.data_type != _FLOAT
            or column_scale.raw is None
            or column_scale.dims != [1, matrix.dims[1]]
        ):
            continue
        rewrites[id(node)] = (weights, scale)
        dropped.update((id(scale_node), id(cast_node)))
    if len(rewrites) != _INT8_MATMULS:
        raise ConfigError(
            f"int8 compute: expected {_INT8_MATMULS} weight products in the model, "
            f"found {len(rewrites)}"
        )

    import numpy as np

    new_nodes: list[bytes] = []
    new_initializers = [
        _initializer(f"{_PREFIX}/zero", np.array(0.0, dtype=np.float32)),
        _initializer(f"{_PREFIX}/one", np.array(1.0, dtype=np.float32)),
        _initializer(f"{_PREFIX}/inv255", np.array(1.0 / 255.0, dtype=np.float32)),
        _initializer(
            f"{_PREFIX}/w_zp", np.array(0, dtype=np.int8) if signed else np.array(128, np.uint8)
        ),
        _initializer(f"{_PREFIX}/tiny", np.array(1e-12, dtype=np.float32)),
        _initializer(f"{_PREFIX}/axis1", np.array([1], dtype=np.int64)),
    ]
    for node in nodes:
        if id(node) in dropped:
            continue
        if id(node) in rewrites:
            replacement, initializers = _int8_product(node, *rewrites[id(node)], tensors, signed)
            new_nodes.append(replacement)
            new_initializers.append(initializers)
        else:
            new_nodes.append(bytes(node.record))
    gone = {output for node in nodes if id(node) in dropped for output in node.outputs}
    # the int8 weights and their scales now live in each product's own initializers:
    # the originals go when the dropped cast and scale nodes were their only readers
    unread = {name for pair in rewrites.values() for name in pair if uses.get(name) == 1}

    parts: list[bytes | memoryview] = []
    nodes_written = False
    for field, value, record in graph_fields:
        if field == _GRAPH_NODE:
            if not nodes_written:
                parts.extend(new_nodes)
                nodes_written = True
            continue
        if (
            field == _GRAPH_VALUE_INFO
            and isinstance(value, memoryview)
            and _value_info_name(value) in gone
        ):
            continue
        if (
            field == _GRAPH_INITIALIZER
            and isinstance(value, memoryview)
            and _decode_tensor(value)[0] in unread
        ):
            continue
        parts.append(record)
    parts.extend(new_initializers)
    new_graph = b"".join(parts)
    out: list[bytes | memoryview] = []
    for field, _, record in top:
        out.append(_bytes_field(_MODEL_GRAPH, new_graph) if field == _MODEL_GRAPH else record)
    # MatMulIntegerToFloat is an onnxruntime operator: the model now imports its domain.
    out.append(_bytes_field(8, _text_field(1, "com.microsoft") + _int_field(2, 1)))
    return b"".join(out)
