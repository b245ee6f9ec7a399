"""The sliding window: a thread's turns walked from the newest back, a page at a time.

Each turn's cost is its stored token count plus the counted prefix of its line (a masked
observation is counted as rendered), so the whole thread is never loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from tether.context.models import MaskedObservation
from tether.context.plan import Part
from tether.threads.models import Turn, TurnKind
from tether.threads.summarize import render_turn
from tether.threads.tokens import TokenCounter

Candidate = tuple[Part, MaskedObservation | None]
OlderTurns = Callable[[int, int], list[Turn]]
"""``(before_seq, limit)`` to the ``limit`` turns just before ``before_seq``, newest first."""

_PREFIX_COUNTS: dict[tuple[str, str], int] = {}
_PREFIX_CACHE_SIZE = 200_000


def render_line(turn: Turn, mask_over: int | None) -> tuple[str, MaskedObservation | None]:
    """A turn as one context entry; long tool output becomes a digest and a reference."""
    if mask_over is not None and turn.kind is TurnKind.OBSERVATION and turn.tokens > mask_over:
        digest = hashlib.sha256(turn.content.encode()).hexdigest()
        preview = " ".join(turn.content.split())[:80]
        where = f"turn_id {turn.turn_id}" + (f", ref {turn.ref}" if turn.ref else "")
        line = (
            f"[{turn.seq}] {turn.role.value}/observation: [masked: {turn.tokens} tokens, "
            f"sha256 {digest[:16]}; read back by {where}] {preview}…"
        )
        return line, MaskedObservation(
            turn_id=turn.turn_id, seq=turn.seq, ref=turn.ref, tokens=turn.tokens, sha256=digest
        )
    return f"[{turn.seq}] {render_turn(turn)}", None


def _count_prefixes(counter: TokenCounter, prefixes: list[str]) -> list[int]:
    """Counts of line prefixes (``[seq] role: ``), cached per counter across builds: the
    next build of a thread renders the same prefixes again."""
    known = {p: _PREFIX_COUNTS.get((counter.id, p)) for p in prefixes}
    missing = [p for p, size in known.items() if size is None]
    if missing:
        if len(_PREFIX_COUNTS) > _PREFIX_CACHE_SIZE:
            _PREFIX_COUNTS.clear()
        for prefix, size in zip(missing, counter.count_many(missing), strict=True):
            known[prefix] = size
            _PREFIX_COUNTS[(counter.id, prefix)] = size
    return [int(known[p] or 0) for p in prefixes]


class TurnWindow:
    """Hands out a thread's turns from the newest back, down to ``floor`` (exclusive).

    Args:
        newest: the first page, newest first.
        page: how many turns ``newest`` asked for; each further read takes twice as
            many, up to 4096.
        older: reads the turns before a seq.
    """

    def __init__(
        self,
        newest: list[Turn],
        page: int,
        counter: TokenCounter,
        mask_over: int | None,
        older: OlderTurns,
    ) -> None:
        self._page = page
        self._counter = counter
        self._mask_over = mask_over
        self._older = older
        self._buffer: list[Candidate] = []
        self._exhausted = len(newest) < page
        self._oldest = newest[-1].seq if newest else 0
        self.floor = 0
        self._fill(newest)

    def _fill(self, turns: list[Turn]) -> None:
        rendered = [render_line(turn, self._mask_over) for turn in turns]
        plain = [(i, t) for i, t in enumerate(turns) if rendered[i][1] is None]
        prefixes = _count_prefixes(
            self._counter,
            [rendered[i][0][: len(rendered[i][0]) - len(t.content)] for i, t in plain],
        )
        masked_sizes = self._counter.count_many([line for line, mask in rendered if mask])
        cost: dict[int, int] = {}
        for (i, turn), prefix in zip(plain, prefixes, strict=True):
            cost[i] = prefix + turn.tokens
        masked_iter = iter(masked_sizes)
        for i, (_, mask) in enumerate(rendered):
            if mask is not None:
                cost[i] = next(masked_iter)
        for i, turn in enumerate(turns):
            line, mask = rendered[i]
            self._buffer.append((Part("turns", line, cost[i], key=str(turn.seq)), mask))

    def next(self) -> Candidate | None:
        """The next older turn as a part (and its mask), or None past the floor."""
        if not self._buffer and not self._exhausted and self._oldest - 1 > self.floor:
            older = self._older(self._oldest, self._page)
            self._exhausted = len(older) < self._page
            self._page = min(self._page * 2, 4096)
            if older:
                self._oldest = older[-1].seq
            self._fill(older)
        if not self._buffer:
            return None
        part, _ = self._buffer[0]
        if int(part.key) <= self.floor:
            return None
        return self._buffer.pop(0)

    def push_back(self, item: Candidate) -> None:
        """Return a turn that did not fit; the next call hands it out again."""
        self._buffer.insert(0, item)
