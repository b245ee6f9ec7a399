"""The plan of a context: which parts it holds so far, what they cost, what was dropped.

Sections take their parts into a :class:`Plan` in priority order (see
:mod:`tether.context.builder`); :func:`fit` then assembles the text in reading order and
counts it once, trimming only when a counter's counts do not add up over lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.context.models import BuiltContext, ContextSection, DroppedPart, MaskedObservation
from tether.errors import ContextOverBudget
from tether.memory.recall import RecallHit, format_for_prompt
from tether.threads.models import Summary
from tether.threads.tokens import TokenCounter

SEPARATOR = "\n\n"

HEADERS = {
    "procedures": "Procedures (follow these):",
    "constraints": "Active constraints (every one in scope; always apply):",
    "task": "Task state",
    "summary": "Summary of earlier turns",
    "memories": "",
    "turns": "Recent turns:",
}
ORDER = ("procedures", "constraints", "task", "summary", "memories", "turns")


@dataclass(frozen=True)
class Part:
    """One entry of a section, with its token count and what it stands for (``key``:
    a memory id, a run id, a summary id, or a turn's seq)."""

    section: str
    text: str
    tokens: int
    key: str = ""


@dataclass(frozen=True)
class HeaderSizes:
    procedures: int
    constraints: int
    turns: int
    memories: int


@dataclass
class Plan:
    """What the context holds so far. ``turns`` are newest first; ``chosen`` indexes
    ``memories`` (recalled memories other than constraints), most relevant first."""

    budget: int
    counter: TokenCounter
    headers: HeaderSizes
    memories: list[RecallHit]
    memory_sizes: list[int]
    used: int = 0
    fixed: dict[str, list[Part]] = field(default_factory=dict)
    turns: list[Part] = field(default_factory=list)
    masked: dict[int, MaskedObservation] = field(default_factory=dict)
    chosen: list[int] = field(default_factory=list)
    dropped: list[DroppedPart] = field(default_factory=list)
    summary: Summary | None = None

    @classmethod
    def start(cls, budget: int, counter: TokenCounter, memories: list[RecallHit]) -> Plan:
        sizes = counter.count_many(
            [HEADERS["procedures"], HEADERS["constraints"], HEADERS["turns"], memories_header()]
        )
        return cls(
            budget=budget,
            counter=counter,
            headers=HeaderSizes(*sizes),
            memories=memories,
            memory_sizes=counter.count_many([memory_line(hit) for hit in memories]),
        )

    def fits(self, tokens: int) -> bool:
        return self.used + tokens <= self.budget

    def take(self, part: Part) -> None:
        self.fixed.setdefault(part.section, []).append(part)
        self.used += part.tokens

    def drop(self, section: str, what: str, reason: str, tokens: int | None = None) -> None:
        self.dropped.append(DroppedPart(section=section, what=what, reason=reason, tokens=tokens))


def memories_header() -> str:
    return format_for_prompt([])


def memory_line(hit: RecallHit) -> str:
    return format_for_prompt([hit]).split("\n", 1)[1]


def fit(plan: Plan) -> BuiltContext:
    """Assemble the planned parts and count the text once.

    The plan is exact for counters whose counts add up over lines (the default and the
    approximation); for any other counter, the least relevant memory, then the oldest
    turn, then the summary and the task state are dropped until the assembled text fits.

    Raises:
        ContextOverBudget: procedures and constraints alone are over the budget once
            assembled.
    """
    text, sections = _assemble(plan)
    total = plan.counter.count(text)
    while total > plan.budget and _trim(plan):
        text, sections = _assemble(plan)
        total = plan.counter.count(text)
    if total > plan.budget:
        raise ContextOverBudget(
            f"procedures and constraints take {total} tokens ({plan.counter.id}) once "
            f"assembled, over the budget of {plan.budget}; raise the budget or narrow the "
            "scopes"
        )
    summary = plan.summary if plan.fixed.get("summary") else None
    return BuiltContext(
        text=text,
        tokens=total,
        budget=plan.budget,
        counter=plan.counter.id,
        approximate=plan.counter.approximate,
        sections=sections,
        dropped=plan.dropped,
        masked=[plan.masked[seq] for seq in sorted(plan.masked)],
        summary_id=summary.summary_id if summary else None,
        turns=(int(plan.turns[-1].key), int(plan.turns[0].key)) if plan.turns else None,
    )


def _trim(plan: Plan) -> bool:
    """Drop the least valuable optional part; False when only mandatory ones are left."""
    reason = "over the budget once assembled"
    if plan.chosen:
        index = plan.chosen.pop()
        memory_id = plan.memories[index].record.memory_id
        plan.drop("memories", f"memory {memory_id}", reason, plan.memory_sizes[index])
    elif plan.turns:
        part = plan.turns.pop()
        plan.masked.pop(int(part.key), None)
        plan.drop("turns", f"turn {part.key}", reason, part.tokens)
    elif plan.fixed.get("summary") or plan.fixed.get("task"):
        name = "summary" if plan.fixed.get("summary") else "task"
        part = plan.fixed.pop(name)[0]
        plan.drop(name, part.key, reason, part.tokens)
    else:
        return False
    return True


def _assemble(plan: Plan) -> tuple[str, list[ContextSection]]:
    blocks: list[str] = []
    sections: list[ContextSection] = []
    for name in ORDER:
        if name == "memories":
            if not plan.chosen:
                continue
            block = format_for_prompt([plan.memories[i] for i in plan.chosen])
            tokens = plan.headers.memories + sum(plan.memory_sizes[i] for i in plan.chosen)
            items = len(plan.chosen)
        elif name == "turns":
            if not plan.turns:
                continue
            block = "\n".join([HEADERS["turns"], *(p.text for p in reversed(plan.turns))])
            tokens = plan.headers.turns + sum(p.tokens for p in plan.turns)
            items = len(plan.turns)
        else:
            parts = plan.fixed.get(name, [])
            if not parts:
                continue
            block = "\n".join(p.text for p in parts)
            tokens = sum(p.tokens for p in parts)
            items = len(parts) - (1 if name in ("procedures", "constraints") else 0)
        sections.append(ContextSection(name=name, tokens=tokens, items=items))
        blocks.append(block)
    return SEPARATOR.join(blocks), sections
