"""``app.context``: build an agent's working context from durable parts, within a budget.

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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether import canonical
from tether.context.models import BuiltContext, ContextOptions
from tether.context.plan import HEADERS, Part, Plan, fit, memory_line
from tether.context.window import TurnWindow
from tether.errors import ContextOverBudget, InvalidInput
from tether.memory.access import ABOVE_CLEARANCE, SCOPE_NOT_ALLOWED
from tether.memory.models import MemoryKind, Scope
from tether.memory.recall import RecallHit, RecallResult
from tether.permissions import authorize
from tether.principals import Principal
from tether.threads.models import ThreadTail, Turn, TurnRole
from tether.threads.tokens import TokenCounter
from tether.validation import guarded

if TYPE_CHECKING:
    from tether.memory.service import Memory
    from tether.procedures.service import Procedures
    from tether.runs.models import Run
    from tether.runs.service import Runs
    from tether.threads.service import Threads


@guarded
class Context:
    """Builds contexts from the threads, memory, runs and procedures it is given."""

    def __init__(
        self, *, threads: Threads, memory: Memory, runs: Runs, procedures: Procedures
    ) -> None:
        self._threads = threads
        self._memory = memory
        self._runs = runs
        self._procedures = procedures

    def build(
        self,
        principal: Principal,
        thread_id: str,
        *,
        budget: int,
        query: str | None = None,
        procedures: Sequence[str] | None = None,
        run_id: str | None = None,
        options: ContextOptions | None = None,
    ) -> BuiltContext:
        """Assemble the working context of ``thread_id`` within ``budget`` tokens, counted
        by ``app.threads.counter``.

        Args:
            query: what to recall memories for (default: the latest user message).
            procedures: procedure texts, always included; default: the skills and
                policies published for the tenant (``app.procedures``); ``()`` for none.
            run_id: include this run's task state and recall in its run scope.

        Raises:
            ContextOverBudget: procedures and constraints alone exceed the budget.
            InvalidInput: a malformed budget or option; nothing is written.
        """
        authorize(principal, "context.build")
        if procedures is None:
            procedures = self._procedures.render_for_context(principal)
        opts = options or ContextOptions()
        _check(budget, opts)
        first_page = max(16, min(opts.page, budget // 24))
        tail = self._read(principal, thread_id, opts, first_page)
        recalled = self._recall(principal, tail, query, run_id, opts)
        hits = recalled.hits if recalled else []
        plan = Plan.start(budget, self._threads.counter, _memories(hits))
        _report_withheld(plan, recalled)
        _take_procedures(plan, procedures)
        _take_constraints(plan, _constraints(hits))
        _refuse_if_over(plan)
        if run_id is not None:
            _take_task(plan, *self._task_state(principal, run_id))
        window = self._window(principal, tail, first_page, plan.counter, opts)
        _take_latest_turn(plan, window)
        _take_summary(plan, tail, window)
        pending = _take_memories(plan, share=opts.memory_share)
        _take_older_turns(plan, window)
        _take_remaining_memories(plan, pending)
        _report_turns_left_out(plan, window.floor, tail.thread.last_turn_seq)
        return fit(plan)

    def _read(
        self, principal: Principal, thread_id: str, opts: ContextOptions, first_page: int
    ) -> ThreadTail:
        """The thread's tail; with a summary head due, fold the turns first, then reread."""
        tail = self._threads.tail(principal, thread_id, first_page)
        if opts.summary_every is None:
            return tail
        covered = tail.summary.to_seq if tail.summary else 0
        if tail.thread.last_turn_seq - covered < 2 * opts.summary_every:
            return tail
        self._threads.summarize(
            principal,
            thread_id,
            through_seq=tail.thread.last_turn_seq - opts.summary_every,
            max_tokens=opts.summary_tokens,
        )
        return self._threads.tail(principal, thread_id, first_page)

    def _recall(
        self,
        principal: Principal,
        tail: ThreadTail,
        query: str | None,
        run_id: str | None,
        opts: ContextOptions,
    ) -> RecallResult | None:
        """Memories (constraints among them) of the thread's conversation, its user, the
        run and ``opts.scopes``: recall's, so only those the principal may read."""
        if not opts.recall:
            return None
        if query is None:
            query = next((t.content for t in reversed(tail.turns) if t.role is TurnRole.USER), "")
        thread = tail.thread
        scopes: list[tuple[Scope | str, str]] = [
            (Scope.CONVERSATION, thread.thread_id),
            (Scope.USER, thread.user_id),
        ]
        if run_id is not None:
            scopes.append((Scope.RUN, run_id))
        scopes += list(opts.scopes)
        return self._memory.recall(principal, query[:2000], scopes, limit=opts.memory_limit)

    def _task_state(self, principal: Principal, run_id: str) -> tuple[Run, dict[str, Any]]:
        return self._runs.get(principal, run_id), self._runs.state(principal, run_id)

    def _window(
        self,
        principal: Principal,
        tail: ThreadTail,
        first_page: int,
        counter: TokenCounter,
        opts: ContextOptions,
    ) -> TurnWindow:
        thread_id = tail.thread.thread_id

        def older(before_seq: int, limit: int) -> list[Turn]:
            turns = self._threads.last_turns(principal, thread_id, limit, before_seq=before_seq)
            return turns[::-1]

        return TurnWindow(tail.turns[::-1], first_page, counter, opts.mask_observations_over, older)


def _check(budget: int, opts: ContextOptions) -> None:
    if not 1 <= budget <= 10_000_000:
        raise InvalidInput("budget must be between 1 and 10000000 tokens")
    if opts.summary_every is not None and opts.summary_every < 1:
        raise InvalidInput("summary_every must be at least 1 (or None)")
    if not 0.0 <= opts.memory_share <= 1.0:
        raise InvalidInput("memory_share must be between 0 and 1")
    if not 1 <= opts.page <= 10_000:
        raise InvalidInput("page must be between 1 and 10000")


def _constraints(hits: list[RecallHit]) -> list[RecallHit]:
    return [h for h in hits if h.record.kind is MemoryKind.CONSTRAINT]


def _memories(hits: list[RecallHit]) -> list[RecallHit]:
    return [h for h in hits if h.record.kind is not MemoryKind.CONSTRAINT]


def _report_withheld(plan: Plan, recalled: RecallResult | None) -> None:
    """The memories recall withheld from the principal, counted (never their text)."""
    if recalled is None:
        return
    for reason in (SCOPE_NOT_ALLOWED, ABOVE_CLEARANCE):
        count = recalled.filtered_out.get(reason, 0)
        if count:
            what = f"{count} {'memory' if count == 1 else 'memories'}"
            plan.drop("memories", what, f"{reason}: {recalled.filtered_why[reason]}")


def _take_procedures(plan: Plan, procedures: Sequence[str]) -> None:
    texts = [p.strip() for p in procedures if p.strip()]
    if not texts:
        return
    plan.take(Part("procedures", HEADERS["procedures"], plan.headers.procedures))
    for text, size in zip(texts, plan.counter.count_many(texts), strict=True):
        plan.take(Part("procedures", text, size))


def _take_constraints(plan: Plan, constraints: list[RecallHit]) -> None:
    """Every constraint in scope, however many more relevant memories compete."""
    if not constraints:
        return
    lines = [memory_line(h) for h in constraints]
    plan.take(Part("constraints", HEADERS["constraints"], plan.headers.constraints))
    for hit, line, size in zip(constraints, lines, plan.counter.count_many(lines), strict=True):
        plan.take(Part("constraints", line, size, key=hit.record.memory_id))


def _refuse_if_over(plan: Plan) -> None:
    if plan.used > plan.budget:
        raise ContextOverBudget(
            f"procedures and constraints alone take {plan.used} tokens ({plan.counter.id}), "
            f"over the budget of {plan.budget}; raise the budget or narrow the scopes"
        )


def _take_task(plan: Plan, run: Run, state: dict[str, Any]) -> None:
    task = (
        f"{HEADERS['task']} (run {run.run_id}, workflow {run.workflow}@"
        f"{run.workflow_version}, status {run.status.value}, node {run.current_node}):\n"
        f"{canonical.dumps(state)}"
    )
    size = plan.counter.count(task)
    if plan.fits(size):
        plan.take(Part("task", task, size, key=run.run_id))
    else:
        plan.drop("task", f"run {run.run_id}", "does not fit the budget", size)


def _take_turn(plan: Plan, window: TurnWindow) -> bool:
    """The next older turn, if it fits (the section's header comes with the first)."""
    candidate = window.next()
    if candidate is None:
        return False
    part, mask = candidate
    extra = 0 if plan.turns else plan.headers.turns
    if not plan.fits(part.tokens + extra):
        window.push_back(candidate)
        return False
    plan.used += part.tokens + extra
    plan.turns.append(part)
    if mask is not None:
        plan.masked[mask.seq] = mask
    return True


def _take_latest_turn(plan: Plan, window: TurnWindow) -> None:
    """The latest turn goes before the summary head and the memories."""
    _take_turn(plan, window)


def _take_older_turns(plan: Plan, window: TurnWindow) -> None:
    """Older turns while they fit, back to the summary's end: a contiguous window."""
    while _take_turn(plan, window):
        pass


def _take_summary(plan: Plan, tail: ThreadTail, window: TurnWindow) -> None:
    """The summary head; when taken, the window stops at the end of what it covers."""
    summary = tail.summary
    if summary is None:
        return
    latest_seq = tail.turns[-1].seq if tail.turns else 0
    head = (
        f"{HEADERS['summary']} (turns {summary.from_seq}-{summary.to_seq}; the turns "
        f"themselves are kept):\n{summary.text}"
    )
    size = plan.counter.count(head.split("\n", 1)[0]) + summary.tokens
    what = f"summary {summary.summary_id}"
    if summary.to_seq >= latest_seq:
        plan.drop("summary", what, "covers the latest turn", size)
    elif plan.fits(size):
        plan.take(Part("summary", head, size, key=summary.summary_id))
        plan.summary = summary
        window.floor = summary.to_seq
    else:
        plan.drop("summary", what, "does not fit the budget", size)


def _take_memory(plan: Plan, index: int, limit: int) -> bool:
    extra = 0 if plan.chosen else plan.headers.memories
    if plan.used + plan.memory_sizes[index] + extra > limit:
        return False
    plan.used += plan.memory_sizes[index] + extra
    plan.chosen.append(index)
    return True


def _take_memories(plan: Plan, *, share: float) -> list[int]:
    """Memories, most relevant first, up to ``share`` of the budget still free; returns
    the ones left until older turns have had their turn."""
    limit = plan.used + int((plan.budget - plan.used) * share)
    return [i for i in range(len(plan.memories)) if not _take_memory(plan, i, limit)]


def _take_remaining_memories(plan: Plan, pending: list[int]) -> None:
    for index in pending:
        if not _take_memory(plan, index, plan.budget):
            what = f"memory {plan.memories[index].record.memory_id}"
            plan.drop("memories", what, "does not fit the budget", plan.memory_sizes[index])
    plan.chosen.sort()


def _report_turns_left_out(plan: Plan, floor: int, last_seq: int) -> None:
    """The ranges of turns the window did not reach, and those the summary covers."""
    if not plan.turns:
        if last_seq:
            plan.drop(
                "turns", f"turns {floor + 1}-{last_seq}", "not even the latest turn fits the budget"
            )
        return
    older = int(plan.turns[-1].key) - 1
    if older > floor:
        plan.drop("turns", f"turns {floor + 1}-{older}", "older than the window the budget holds")
    summary = plan.summary
    if summary is not None and summary.to_seq >= 1:
        plan.drop(
            "turns",
            f"turns {summary.from_seq}-{summary.to_seq}",
            f"covered by summary {summary.summary_id}",
        )
