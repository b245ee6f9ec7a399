"""Token counting of turns and context budgets: pluggable, with a real tokenizer by default.

A :class:`TokenCounter` counts tokens of a text. The default,
:class:`WordPieceCounter`, runs the WordPiece tokenizer of all-MiniLM-L6-v2 (the
``tokenizer.json`` the install step already places and pins for the default embedder,
checked against its SHA-256) with the ``tokenizers`` package: offline, no download at run
time. Its counts are real tokenizer counts, but of that tokenizer: a chat model's own
tokenizer counts somewhat differently, so give the model's tokenizer as a
:class:`TokenCounter` when the budget must match the model to the token.

Without the ``embeddings`` extra or the tokenizer file, :func:`load_default_counter`
falls back to :class:`ApproximateCounter` and says so: every built context reports
``approximate=True`` and the counter's id.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tether.errors import ConfigError
from tether.redaction import get_logger

logger = get_logger(__name__)


@runtime_checkable
class TokenCounter(Protocol):
    """What the context builder needs to keep a budget."""

    @property
    def id(self) -> str:
        """Stable name of the tokenizer (and its exact file), reported with every context."""
        ...

    @property
    def approximate(self) -> bool:
        """True when the counts are an estimate rather than a tokenizer's."""
        ...

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...


class WordPieceCounter:
    """Counts with the pinned all-MiniLM-L6-v2 ``tokenizer.json`` (no special tokens).

    Its pre-tokenizer splits on whitespace and punctuation, so the count of texts joined
    by newlines is the sum of their counts: the builder can plan with per-part counts and
    still be exact on the assembled text.
    """

    def __init__(self, tokenizer: Any, digest: str) -> None:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        # encode_batch_fast (tokenizers >= 0.21) skips the offsets a count does not need.
        self._encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
        self._id = f"wordpiece-minilm-l6-v2-{digest[:12]}"

    @classmethod
    def load(cls, path: Path | None = None) -> WordPieceCounter:
        """Load the pinned file (``TETHER_TOKENIZER_PATH`` or the install location).

        Raises:
            ConfigError: ``tokenizers`` or the file is missing.
            IntegrityViolation: the file is not the pinned one.
        """
        from tether.memory.embeddings import (
            TOKENIZER_SHA256,
            default_tokenizer_path,
            read_verified,
        )

        try:
            import tokenizers
        except ImportError as exc:
            raise ConfigError(
                "the tokenizers package is not installed: pip install 'tether[embeddings]'"
            ) from exc
        data = read_verified(path or default_tokenizer_path(), TOKENIZER_SHA256, "tokenizer")
        return cls(tokenizers.Tokenizer.from_str(data.decode("utf-8")), TOKENIZER_SHA256)

    @property
    def id(self) -> str:
        return self._id

    @property
    def approximate(self) -> bool:
        return False

    def count(self, text: str) -> int:
        """Tokens of ``text``: its lines are encoded in one parallel batch and summed,
        which is the count of the whole text because the pre-tokenizer splits at every
        whitespace, newlines included."""
        if not text:
            return 0
        return sum(self.count_many(text.split("\n")))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encoded = self._encode(list(texts), add_special_tokens=False)
        return [len(item.ids) for item in encoded]


_PIECE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class ApproximateCounter:
    """An estimate for when no tokenizer is installed: every punctuation mark is a token,
    and a word is one token per started six characters. Reported as approximate."""

    id = "approximate-words-v1"
    approximate = True

    def count(self, text: str) -> int:
        total = 0
        for piece in _PIECE.findall(text):
            total += 1 if len(piece) <= 6 else (len(piece) + 5) // 6
        return total

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


_default: TokenCounter | None = None
_default_lock = threading.Lock()


def load_default_counter() -> TokenCounter:
    """The default counter, loaded once per process: WordPiece, else the approximation.

    A missing package or file falls back (logged with the reason); a tokenizer file that
    is present but not the pinned one raises, as it does for the embedder.
    """
    global _default
    with _default_lock:
        if _default is None:
            try:
                _default = WordPieceCounter.load()
            except ConfigError as exc:
                logger.warning("token counts are approximate: %s", exc.message)
                _default = ApproximateCounter()
        return _default
