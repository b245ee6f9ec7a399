"""What a context build takes (:class:`ContextOptions`) and what it returns
(:class:`BuiltContext`, with its sections, what it dropped and what it masked)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from tether.memory.models import Scope


@dataclass(frozen=True)
class ContextOptions:
    """How a context is built. The sliding window is always on."""

    summary_every: int | None = None
    """Summary head: once this many turns past the summary are older than the newest
    ``summary_every`` turns, fold them into a new stored summary (None: never)."""
    summary_tokens: int = 400
    """Most tokens a new summary may take."""
    mask_observations_over: int | None = 300
    """Observation masking: tool output over this many tokens is shown as a digest and
    a reference (None: never masked)."""
    memory_limit: int = 8
    """Most recalled memories (constraints come on top, all of them)."""
    memory_share: float = 0.25
    """Share of the budget left after the mandatory parts that memories may take before
    older turns have had their turn."""
    scopes: Sequence[tuple[Scope | str, str]] = ()
    """Memory scopes besides the thread's conversation, its user and the run."""
    recall: bool = True
    """Recall memories (and constraints) at all."""
    page: int = 256
    """Most turns the first read takes from the end (fewer for a small budget); each
    further read takes twice as many."""


class ContextSection(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    tokens: int
    items: int


class DroppedPart(BaseModel):
    """Something left out of the context, and why."""

    model_config = ConfigDict(frozen=True)

    section: str
    what: str
    reason: str
    tokens: int | None = None


class MaskedObservation(BaseModel):
    """A tool output replaced by its digest; read it back with ``Threads.get_turn``
    (``turn_id``) or ``Threads.find_turns`` (``ref``)."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    seq: int
    ref: str | None
    tokens: int
    sha256: str


class BuiltContext(BaseModel):
    """A context and its accounting. ``tokens`` is counted on ``text`` itself."""

    model_config = ConfigDict(frozen=True)

    text: str
    tokens: int
    budget: int
    counter: str
    approximate: bool
    """True when the counter estimates (no tokenizer was installed)."""
    sections: list[ContextSection]
    dropped: list[DroppedPart]
    masked: list[MaskedObservation]
    summary_id: str | None
    turns: tuple[int, int] | None
    """First and last seq of the turns included verbatim."""
