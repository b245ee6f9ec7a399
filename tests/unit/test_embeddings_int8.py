"""MiniLM on int8 kernels (``compute="int8"``): the rewrite and its agreement with float.

Like ``test_embeddings.py``, these need the ``embeddings`` extra and the fetched tokenizer,
skip without them, and fail under ``CI=true`` instead of skipping.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.embeddings import memory_texts

from tests.conftest import running_in_ci
from tether.errors import ConfigError, IntegrityViolation
from tether.memory import embeddings
from tether.memory.embeddings import (
    EMBEDDER_ENV,
    MINILM_DIM,
    MODEL_SHA256,
    TOKENIZER_ENV,
    MiniLMEmbedder,
    load_default_embedder,
    probe_default_embedder,
    read_verified,
)
from tether.memory.onnx_int8 import (
    INT8_COMPUTE_VERSION,
    int8_compute_graph,
    signed_products_exact,
)

if importlib.util.find_spec("numpy") is not None:
    import numpy as np

SENTENCES = [
    "Alice prefers email over phone calls.",
    "The deployment failed because the database migration timed out.",
    "How does Alice like to be contacted?",
    "Priya's daughter has a piano recital next Tuesday at 3pm.",
    "Stock prices fell sharply after the earnings report.",
    "ok",
    "",
    "word " * 400,
]


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[MiniLMEmbedder, MiniLMEmbedder]]:
    """The int8-compute (default) and the float-compute embedders, both loaded."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(TOKENIZER_ENV, raising=False)
        patch.delenv(EMBEDDER_ENV, raising=False)
        probe = probe_default_embedder()
    if probe.embedder is None:
        if running_in_ci():
            pytest.fail(f"CI=true but the default embedder is missing: {probe.why}", pytrace=False)
        pytest.skip(f"default embedder not installed: {probe.why}")
    assert isinstance(probe.embedder, MiniLMEmbedder)
    int8 = probe.embedder
    float_ = MiniLMEmbedder(tokenizer_path=int8.tokenizer_path, compute="float")
    int8.load()
    float_.load()
    yield int8, float_


def test_int8_compute_has_its_own_id(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder],
) -> None:
    int8, float_ = pair

    assert int8.compute == "int8"
    assert float_.compute == "float"
    assert int8.id != float_.id
    assert int8.id.startswith(f"all-MiniLM-L6-v2-int8-i8mm{INT8_COMPUTE_VERSION}@")
    assert float_.id.startswith("all-MiniLM-L6-v2-int8@")
    assert MODEL_SHA256[:12] in int8.id
    assert MODEL_SHA256[:12] in float_.id


def test_int8_vectors_agree_with_float_ones(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder], capsys: pytest.CaptureFixture[str]
) -> None:
    int8, float_ = pair
    texts = SENTENCES + memory_texts(200, seed=11)

    fast = int8.embed(texts)
    exact = float_.embed(texts)

    assert int8.dim == float_.dim == MINILM_DIM
    assert fast.shape == exact.shape == (len(texts), MINILM_DIM)
    assert fast.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    cosines = (fast.astype(np.float64) * exact).sum(axis=1)
    with capsys.disabled():
        print(
            f"\n  [embeddings] int8 against float compute, {len(texts)} texts: cosine min "
            f"{cosines.min():.4f}, mean {cosines.mean():.4f}"
        )
    assert cosines.min() >= 0.98
    assert cosines.mean() >= 0.995


def test_int8_vectors_rank_like_float_ones(pair: tuple[MiniLMEmbedder, MiniLMEmbedder]) -> None:
    int8, _ = pair
    query, close, unrelated = int8.embed(SENTENCES[2:3] + SENTENCES[0:2])

    assert float(query @ close) > float(query @ unrelated) + 0.2


def test_an_int8_vector_does_not_depend_on_its_batch(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder],
) -> None:
    """Activations are quantised per token, never per batch: padding and neighbours don't count."""
    int8, _ = pair
    texts = memory_texts(30, seed=5) + SENTENCES[:5]
    small_batches = MiniLMEmbedder(tokenizer_path=int8.tokenizer_path, batch_size=3, compute="int8")

    together = int8.embed(texts)
    in_threes = small_batches.embed(texts)
    alone = np.vstack([int8.embed([text]) for text in texts])

    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(in_threes, alone, atol=1e-5)


def test_a_tampered_model_file_is_refused_before_the_rewrite(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder], tmp_path: Path
) -> None:
    int8, _ = pair
    bad = tmp_path / "model.onnx"
    shutil.copyfile(int8.model_path, bad)
    data = bytearray(bad.read_bytes())
    data[len(data) // 3] ^= 0x01
    bad.write_bytes(bytes(data))
    embedder = MiniLMEmbedder(model_path=bad, tokenizer_path=int8.tokenizer_path, compute="int8")

    with pytest.raises(IntegrityViolation) as caught:
        embedder.embed(["Alice prefers email."])

    assert MODEL_SHA256 in str(caught.value)
    assert hashlib.sha256(bytes(data)).hexdigest() in str(caught.value)
    assert not embedder.loaded


def test_the_rewrite_is_deterministic_and_keeps_the_pinned_file_untouched(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder],
) -> None:
    int8, _ = pair
    model = read_verified(int8.model_path, MODEL_SHA256, "model file")

    first = int8_compute_graph(model)
    second = int8_compute_graph(model)

    assert first == second
    assert first != model
    assert b"MatMulIntegerToFloat" in first
    assert hashlib.sha256(int8.model_path.read_bytes()).hexdigest() == MODEL_SHA256


def test_the_rewrite_refuses_a_graph_that_is_not_the_pinned_model() -> None:
    with pytest.raises(ConfigError, match="no single graph"):
        int8_compute_graph(b"")
    with pytest.raises(ConfigError, match="int8 compute"):
        int8_compute_graph(b"\x3a\x02\x0a\x00")  # a graph holding one empty node
    with pytest.raises(ConfigError, match="int8 compute"):
        int8_compute_graph(b"\xff\xff\xff")


def test_tether_embedder_picks_the_compute(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    int8, float_ = pair
    monkeypatch.setenv(TOKENIZER_ENV, str(int8.tokenizer_path))

    for name in ("default", "minilm-int8", ""):
        monkeypatch.setenv(EMBEDDER_ENV, name)
        chosen = load_default_embedder()
        assert isinstance(chosen, MiniLMEmbedder)
        assert chosen.id == int8.id

    monkeypatch.setenv(EMBEDDER_ENV, "minilm-float")
    chosen = load_default_embedder()
    assert isinstance(chosen, MiniLMEmbedder)
    assert chosen.id == float_.id

    assert load_default_embedder("none") is None
    assert load_default_embedder("minilm-int8").id == int8.id  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="minilm-float"):
        load_default_embedder("minilm-fp16")
    with pytest.raises(ConfigError, match="compute"):
        MiniLMEmbedder(tokenizer_path=int8.tokenizer_path, compute="fp16")


def test_signed_products_are_exact_only_on_a_cpu_with_vnni() -> None:
    flags = "processor\t: 0\nflags\t\t: fpu sse2 avx2 {}\nbugs\t\t: spectre\n"
    assert signed_products_exact(flags.format("avx512f avx512_vnni"))
    assert signed_products_exact(flags.format("avx_vnni"))
    assert not signed_products_exact(flags.format("avx512f avx512bw"))
    assert not signed_products_exact("Features\t: fp asimd asimddp\n")  # another architecture
    assert not signed_products_exact("")


def test_the_kernel_follows_the_cpu_and_gives_the_same_vectors(
    pair: tuple[MiniLMEmbedder, MiniLMEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """uint8 by int8 where it is exact (VNNI), uint8 by uint8 elsewhere: the same vectors
    to the bit, so one id."""
    int8, _ = pair
    texts = [*SENTENCES, *memory_texts(40)]
    real = embeddings.int8_compute_graph
    asked: list[bool] = []

    def recording(model: bytes, *, signed: bool = False) -> bytes:
        asked.append(signed)
        return real(model, signed=signed)

    monkeypatch.setattr(embeddings, "int8_compute_graph", recording)
    exact = signed_products_exact()
    built = {}
    for signed in sorted({False, exact}):
        monkeypatch.setattr(embeddings, "signed_products_exact", lambda signed=signed: signed)
        embedder = MiniLMEmbedder(tokenizer_path=int8.tokenizer_path, compute="int8")
        built[signed] = np.asarray(embedder.embed(texts))
        assert embedder.id == int8.id
    assert asked == sorted({False, exact})
    assert np.array_equal(built[exact], np.asarray(int8.embed(texts)))
    assert np.array_equal(built[False], built[exact])
