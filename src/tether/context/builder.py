"""Build an agent's working context from durable parts, within a token budget.

The parts, in the order they appear: procedures, every active constraint in the scopes,
the run's task state, a summary head, recalled memories (as untrusted context) and the
most recent turns verbatim. Procedures and constraints are always included (a budget
that cannot hold them is refused); the rest is planned by priority: task state, the
latest turn, the summary head, memories up to a share of what is left, then older turns
back to the summary, then more memories.

Strategies (:class:`ContextOptions`): a sliding window of recent turns (always); a
summary head (``summary_every``: the oldest turns are folded into a stored summary every
N turns); observation masking (``mask_observations_over``: tool output longer than that
is replaced by a digest and the reference that reads it back).

Planning uses stored per-turn token counts and reads turns from the end only as far as
the budget reaches; the total is then counted once on the assembled text and never
exceeds the budget.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.context.summarize import render_turn
from tether.context.tokens import TokenCounter
from tether.errors import ContextOverBudget, InvalidInput, NotFound
from tether.memory.models import MemoryKind, Scope
from tether.memory.recall import RecallHit, format_for_prompt
from tether.principals import Principal, Role
from tether.threads.models import Summary, Thread, Turn, TurnKind, TurnRole

if TYPE_CHECKING:
    from tether.threads.service import Threads

READERS = (Role.VIEWER, Role.AGENT, Role.OPERATOR, Role.APPROVER)

SEPARATOR = "\n\n"
_LAST = 2**62


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


@dataclass
class _Part:
    section: str
    text: str
    tokens: int
    key: str = ""


@dataclass
class _Plan:
    budget: int
    used: int = 0
    fixed: dict[str, list[_Part]] = field(default_factory=dict)

    def fits(self, tokens: int) -> bool:
        return self.used + tokens <= self.budget

    def take(self, part: _Part) -> None:
        self.fixed.setdefault(part.section, []).append(part)
        self.used += part.tokens


HEADERS = {
    "procedures": "Procedures (follow these):",
    "constraints": "Active constraints (every one in scope; always apply):",
    "task": "Task state",
    "summary": "Summary of earlier turns",
    "memories": "",
    "turns": "Recent turns:",
}
ORDER = ("procedures", "constraints", "task", "summary", "memories", "turns")


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


def build_context(
    threads: Threads,
    principal: Principal,
    thread_id: str,
    *,
    budget: int,
    query: str | None = None,
    procedures: Sequence[str] = (),
    run_id: str | None = None,
    options: ContextOptions | None = None,
) -> BuiltContext:
    """Assemble the working context of ``thread_id`` within ``budget`` tokens.

    Args:
        procedures: already-rendered procedure texts; always included.
        query: what to recall memories for (default: the latest user message).
        run_id: include this run's task state and recall in its run scope.

    Raises:
        ContextOverBudget: procedures and constraints alone exceed the budget.
        InvalidInput: a malformed budget or option; nothing is written.
    """
    opts = options or ContextOptions()
    if not 1 <= budget <= 10_000_000:
        raise InvalidInput("budget must be between 1 and 10000000 tokens")
    if opts.summary_every is not None and opts.summary_every < 1:
        raise InvalidInput("summary_every must be at least 1 (or None)")
    if not 0.0 <= opts.memory_share <= 1.0:
        raise InvalidInput("memory_share must be between 0 and 1")
    if not 1 <= opts.page <= 10_000:
        raise InvalidInput("page must be between 1 and 10000")
    counter = threads.counter
    principal.require(*READERS)
    tenant = principal.tenant_id
    storage = threads.storage
    first_page = max(16, min(opts.page, budget // 24))

    def read() -> tuple[Thread, Summary | None, list[Turn]]:
        with storage.transaction(tenant, write=False) as txn:
            thread = txn.get_thread(tenant, thread_id)
            if thread is None:
                raise NotFound(f"no thread {thread_id} in tenant {tenant!r}")
            summary = txn.latest_thread_summary(tenant, thread_id)
            newest = txn.list_thread_turns_before(
                tenant, thread_id, before_seq=_LAST, limit=first_page
            )
        return thread, summary, newest

    thread, summary, newest = read()
    if opts.summary_every is not None:
        covered = summary.to_seq if summary else 0
        if thread.last_turn_seq - covered >= 2 * opts.summary_every:
            threads.summarize(
                principal,
                thread_id,
                through_seq=thread.last_turn_seq - opts.summary_every,
                max_tokens=opts.summary_tokens,
            )
            thread, summary, newest = read()

    hits: list[RecallHit] = []
    if opts.recall:
        if query is None:
            query = next((t.content for t in newest if t.role is TurnRole.USER), "")
        scopes: list[tuple[Scope | str, str]] = [
            (Scope.CONVERSATION, thread_id),
            (Scope.USER, thread.user_id),
        ]
        if run_id is not None:
            scopes.append((Scope.RUN, run_id))
        scopes += list(opts.scopes)
        hits = threads.memory.recall(principal, query[:2000], scopes, limit=opts.memory_limit).hits
    constraints = [h for h in hits if h.record.kind is MemoryKind.CONSTRAINT]
    memories = [h for h in hits if h.record.kind is not MemoryKind.CONSTRAINT]

    plan = _Plan(budget)
    dropped: list[DroppedPart] = []

    # Mandatory: procedures and constraints.
    texts = [p.strip() for p in procedures if p.strip()]
    constraint_lines = [_memory_line(h) for h in constraints]
    header_sizes = counter.count_many(
        [HEADERS["procedures"], HEADERS["constraints"], HEADERS["turns"], _memories_header()]
    )
    sizes = counter.count_many([*texts, *constraint_lines])
    if texts:
        plan.take(_Part("procedures", HEADERS["procedures"], header_sizes[0]))
        for text, size in zip(texts, sizes[: len(texts)], strict=True):
            plan.take(_Part("procedures", text, size))
    if constraint_lines:
        plan.take(_Part("constraints", HEADERS["constraints"], header_sizes[1]))
        for h, line, size in zip(constraints, constraint_lines, sizes[len(texts) :], strict=True):
            plan.take(_Part("constraints", line, size, key=h.record.memory_id))
    if plan.used > budget:
        raise ContextOverBudget(
            f"procedures and constraints alone take {plan.used} tokens ({counter.id}), over "
            f"the budget of {budget}; raise the budget or narrow the scopes"
        )

    # Task state.
    if run_id is not None:
        run = threads.runs.get(principal, run_id)
        state = threads.runs.state(principal, run_id)
        task = (
            f"{HEADERS['task']} (run {run.run_id}, workflow {run.workflow}@"
            f"{run.workflow_version}, status {run.status.value}, node {run.current_node}):\n"
            f"{canonical.dumps(state)}"
        )
        size = counter.count(task)
        if plan.fits(size):
            plan.take(_Part("task", task, size, key=run_id))
        else:
            dropped.append(
                DroppedPart(
                    section="task",
                    what=f"run {run_id}",
                    tokens=size,
                    reason="does not fit the budget",
                )
            )

    # The latest turn, then the summary head.
    mask_over = opts.mask_observations_over
    turn_parts: list[_Part] = []
    masked: dict[int, MaskedObservation] = {}
    window = _TurnWalker(threads, principal, thread_id, newest, first_page, counter, mask_over)
    turns_header = header_sizes[2]

    def take_turn() -> bool:
        candidate = window.next()
        if candidate is None:
            return False
        part, mask = candidate
        extra = 0 if turn_parts else turns_header
        if not plan.fits(part.tokens + extra):
            window.push_back(candidate)
            return False
        if not turn_parts:
            plan.used += turns_header
        turn_parts.append(part)
        plan.used += part.tokens
        if mask is not None:
            masked[mask.seq] = mask
        return True

    take_turn()
    summary_used: Summary | None = None
    if summary is not None:
        head = (
            f"{HEADERS['summary']} (turns {summary.from_seq}-{summary.to_seq}; the turns "
            f"themselves are kept):\n{summary.text}"
        )
        size = counter.count(head.split("\n", 1)[0]) + summary.tokens
        newest_seq = newest[0].seq if newest else 0
        if summary.to_seq >= newest_seq:
            dropped.append(
                DroppedPart(
                    section="summary",
                    what=f"summary {summary.summary_id}",
                    tokens=size,
                    reason="covers the latest turn",
                )
            )
        elif plan.fits(size):
            plan.take(_Part("summary", head, size, key=summary.summary_id))
            summary_used = summary
            window.floor = summary.to_seq
        else:
            dropped.append(
                DroppedPart(
                    section="summary",
                    what=f"summary {summary.summary_id}",
                    tokens=size,
                    reason="does not fit the budget",
                )
            )

    # Memories up to their share, older turns, then the rest of the memories.
    memory_lines = [_memory_line(h) for h in memories]
    memory_sizes = counter.count_many(memory_lines)
    memory_header = header_sizes[3]
    chosen: list[int] = []
    share_limit = plan.used + int((budget - plan.used) * opts.memory_share)

    def take_memory(index: int, limit: int) -> bool:
        extra = 0 if chosen else memory_header
        if plan.used + memory_sizes[index] + extra > limit:
            return False
        plan.used += memory_sizes[index] + extra
        chosen.append(index)
        return True

    pending = list(range(len(memories)))
    pending = [i for i in pending if not take_memory(i, share_limit)]
    while take_turn():
        pass
    for index in pending:
        if not take_memory(index, budget):
            dropped.append(
                DroppedPart(
                    section="memories",
                    what=f"memory {memories[index].record.memory_id}",
                    tokens=memory_sizes[index],
                    reason="does not fit the budget",
                )
            )
    chosen.sort()

    if not turn_parts and thread.last_turn_seq:
        dropped.append(
            DroppedPart(
                section="turns",
                what=f"turns {window.floor + 1}-{thread.last_turn_seq}",
                reason="not even the latest turn fits the budget",
            )
        )
    if turn_parts:
        first_seq = int(turn_parts[-1].key)
        older = first_seq - 1
        floor = window.floor
        if older > floor:
            dropped.append(
                DroppedPart(
                    section="turns",
                    what=f"turns {floor + 1}-{older}",
                    reason="older than the window the budget holds",
                )
            )
        if summary_used is not None and summary_used.to_seq >= 1:
            dropped.append(
                DroppedPart(
                    section="turns",
                    what=f"turns {summary_used.from_seq}-{summary_used.to_seq}",
                    reason=f"covered by summary {summary_used.summary_id}",
                )
            )

    def assemble() -> tuple[str, list[ContextSection]]:
        blocks: list[str] = []
        sections: list[ContextSection] = []
        for name in ORDER:
            if name == "memories":
                if not chosen:
                    continue
                block = format_for_prompt([memories[i] for i in chosen])
                tokens = memory_header + sum(memory_sizes[i] for i in chosen)
                sections.append(ContextSection(name=name, tokens=tokens, items=len(chosen)))
            elif name == "turns":
                if not turn_parts:
                    continue
                lines = [p.text for p in reversed(turn_parts)]
                block = "\n".join([HEADERS["turns"], *lines])
                tokens = turns_header + sum(p.tokens for p in turn_parts)
                sections.append(ContextSection(name=name, tokens=tokens, items=len(turn_parts)))
            else:
                parts = plan.fixed.get(name, [])
                if not parts:
                    continue
                block = "\n".join(p.text for p in parts)
                items = len(parts) - (1 if name in ("procedures", "constraints") else 0)
                sections.append(
                    ContextSection(name=name, tokens=sum(p.tokens for p in parts), items=items)
                )
            blocks.append(block)
        return SEPARATOR.join(blocks), sections

    text, sections = assemble()
    total = counter.count(text)
    # The plan is exact for counters whose counts add up over lines (the default and
    # the approximation); for any other counter, trim from the oldest turn and the
    # least relevant memory until the assembled text fits.
    while total > budget and (
        turn_parts or chosen or plan.fixed.get("task") or plan.fixed.get("summary")
    ):
        if chosen:
            index = chosen.pop()
            dropped.append(
                DroppedPart(
                    section="memories",
                    what=f"memory {memories[index].record.memory_id}",
                    tokens=memory_sizes[index],
                    reason="over the budget once assembled",
                )
            )
        elif turn_parts:
            part = turn_parts.pop()
            masked.pop(int(part.key), None)
            dropped.append(
                DroppedPart(
                    section="turns",
                    what=f"turn {part.key}",
                    tokens=part.tokens,
                    reason="over the budget once assembled",
                )
            )
        else:
            name = "summary" if plan.fixed.get("summary") else "task"
            part = plan.fixed.pop(name)[0]
            dropped.append(
                DroppedPart(
                    section=name,
                    what=part.key,
                    tokens=part.tokens,
                    reason="over the budget once assembled",
                )
            )
        text, sections = assemble()
        total = counter.count(text)
    if total > budget:
        raise ContextOverBudget(
            f"procedures and constraints take {total} tokens ({counter.id}) once assembled, "
            f"over the budget of {budget}; raise the budget or narrow the scopes"
        )
    span = (int(turn_parts[-1].key), int(turn_parts[0].key)) if turn_parts else None
    if not plan.fixed.get("summary"):
        summary_used = None
    return BuiltContext(
        text=text,
        tokens=total,
        budget=budget,
        counter=counter.id,
        approximate=counter.approximate,
        sections=sections,
        dropped=dropped,
        masked=[masked[seq] for seq in sorted(masked)],
        summary_id=summary_used.summary_id if summary_used else None,
        turns=span,
    )


def _memories_header() -> str:
    return format_for_prompt([])


def _memory_line(hit: RecallHit) -> str:
    return format_for_prompt([hit]).split("\n", 1)[1]


_PREFIX_COUNTS: dict[tuple[str, str], int] = {}
_PREFIX_CACHE_SIZE = 200_000


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


class _TurnWalker:
    """Walks a thread's turns from the newest back, a page at a time, down to ``floor``.

    Each turn's cost is its stored token count plus the counted prefix of its line
    (a masked observation is counted as rendered), so the whole thread is never loaded.
    """

    def __init__(
        self,
        threads: Threads,
        principal: Principal,
        thread_id: str,
        first_page: list[Turn],
        page: int,
        counter: TokenCounter,
        mask_over: int | None,
    ) -> None:
        self._threads = threads
        self._principal = principal
        self._thread_id = thread_id
        self._page = page
        self._counter = counter
        self._mask_over = mask_over
        self._buffer: list[tuple[_Part, MaskedObservation | None]] = []
        self._exhausted = len(first_page) < page
        self._oldest = first_page[-1].seq if first_page else 0
        self.floor = 0
        self._fill(first_page)

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
            self._buffer.append((_Part("turns", line, cost[i], key=str(turn.seq)), mask))

    def next(self) -> tuple[_Part, MaskedObservation | None] | None:
        if not self._buffer and not self._exhausted and self._oldest - 1 > self.floor:
            tenant = self._principal.tenant_id
            with self._threads.storage.transaction(tenant, write=False) as txn:
                older = txn.list_thread_turns_before(
                    tenant, self._thread_id, before_seq=self._oldest, limit=self._page
                )
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

    def push_back(self, item: tuple[_Part, MaskedObservation | None]) -> None:
        self._buffer.insert(0, item)
