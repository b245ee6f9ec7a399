"""``app.threads``: conversation threads, their turns and summaries.

Turns are stored once, in order: a thread reserves sequence numbers inside the append's
transaction, so concurrent appends never share or skip one. Summaries are stored beside
the turns they cover and never replace them. Every write is audited (ids, counts and
kinds only: never content). ``app.context`` builds a thread's working context and reads
the thread through this service.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.config import Settings
from tether.errors import InvalidInput, NotFound
from tether.ids import IdSource
from tether.permissions import authorize
from tether.principals import Principal
from tether.storage.base import Storage
from tether.storage.stores import ThreadStore
from tether.threads.models import NewTurn, Summary, Thread, ThreadTail, Turn, TurnKind
from tether.threads.subject import erase_user_threads_txn, export_user_threads_txn, is_held
from tether.validation import guarded

if TYPE_CHECKING:
    from tether.threads.summarize import Summarizer
    from tether.threads.tokens import TokenCounter

MAX_TURN_CHARS = 1_000_000
MAX_BATCH = 10_000
_LAST = 2**62


@guarded
class Threads:
    """Conversation threads of one database.

    The token counter and the summarizer belong here: each turn's token count is stored
    at append time and each summary is written by this service, so the context builder
    plans with the same counter (``app.threads.counter``). Both are loaded on first use,
    so opening the application loads no tokenizer.
    """

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        audit: AuditLog,
        *,
        settings: Settings,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | None = None,
        erase_sessions: Callable[[Principal, list[str]], int] | None = None,
    ) -> None:
        self.storage = storage
        self._erase_sessions = erase_sessions
        self._clock = clock
        self._ids = ids
        self._audit = audit
        self._settings = settings
        self._counter = counter
        self._summarizer = summarizer

    @property
    def counter(self) -> TokenCounter:
        """The token counter (the default one is loaded on first use)."""
        if self._counter is None:
            from tether.threads.tokens import load_default_counter

            self._counter = load_default_counter()
        return self._counter

    @counter.setter
    def counter(self, value: TokenCounter) -> None:
        self._counter = value

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer: the chat endpoint of the settings, else the extractive one."""
        if self._summarizer is None:
            from tether.threads.summarize import load_summarizer

            self._summarizer = load_summarizer(self._settings, self.counter)
        return self._summarizer

    @summarizer.setter
    def summarizer(self, value: Summarizer) -> None:
        self._summarizer = value

    # -- threads -------------------------------------------------------------------------

    def create(
        self,
        principal: Principal,
        user_id: str,
        *,
        title: str = "",
        thread_id: str | None = None,
        retention_days: int | None = None,
    ) -> Thread:
        """Start a thread of ``user_id``; it is purged after ``retention_days`` without a
        new turn (``None``: kept until erased)."""
        authorize(principal, "threads.create")
        _check_id(user_id, "user id")
        if thread_id is not None:
            _check_id(thread_id, "thread id")
        if retention_days is not None and not 1 <= retention_days <= 36_500:
            raise InvalidInput("retention_days must be between 1 and 36500 (or None)")
        if len(title) > 500:
            raise InvalidInput("a thread title holds at most 500 characters")
        now = self._clock.now()
        thread = Thread(
            tenant_id=principal.tenant_id,
            thread_id=thread_id or str(self._ids.new_id()),
            user_id=user_id,
            title=title,
            created_at=now,
            created_by=principal.principal_id,
            updated_at=now,
            last_turn_seq=0,
            retention_days=retention_days,
            expires_at=_expiry(now, retention_days),
        )
        with self.storage.transaction(principal.tenant_id) as txn:
            txn.insert_thread(thread)
            self._audit.record_by_txn(
                txn,
                principal,
                action="thread.created",
                target=f"thread:{thread.thread_id}",
                details={"retention_days": retention_days},
                subjects=[user_id],
            )
        return thread

    def get(self, principal: Principal, thread_id: str) -> Thread:
        authorize(principal, "threads.get")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            return self._get_txn(txn, principal.tenant_id, thread_id)

    def all(
        self, principal: Principal, *, user_id: str | None = None, limit: int = 100
    ) -> list[Thread]:
        """Threads of the tenant (or of one user), most recently active first."""
        authorize(principal, "threads.all")
        if not 1 <= limit <= 10_000:
            raise InvalidInput("limit must be between 1 and 10000")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            return txn.list_threads(principal.tenant_id, user_id=user_id, limit=limit)

    # -- turns ---------------------------------------------------------------------------

    def append(self, principal: Principal, thread_id: str, turn: NewTurn) -> Turn:
        return self.append_many(principal, thread_id, [turn])[0]

    def append_many(
        self, principal: Principal, thread_id: str, turns: Sequence[NewTurn]
    ) -> list[Turn]:
        """Append turns in one transaction, numbered in the order given."""
        authorize(principal, "threads.append_many")
        if not turns:
            raise InvalidInput("nothing to append: give at least one turn")
        if len(turns) > MAX_BATCH:
            raise InvalidInput(f"append at most {MAX_BATCH} turns at a time")
        for turn in turns:
            if not isinstance(turn, NewTurn):
                raise InvalidInput("turns must be NewTurn objects")
            if len(turn.content) > MAX_TURN_CHARS:
                raise InvalidInput(f"a turn holds at most {MAX_TURN_CHARS} characters")
        tenant = principal.tenant_id
        sizes = self.counter.count_many([turn.content for turn in turns])
        now = self._clock.now()
        with self.storage.transaction(tenant) as txn:
            thread = self._get_txn(txn, tenant, thread_id)
            last = txn.advance_thread(
                tenant,
                thread_id,
                count=len(turns),
                updated_at=now,
                expires_at=_expiry(now, thread.retention_days),
            )
            if last is None:
                raise NotFound(f"no thread {thread_id} in tenant {tenant!r}")
            first = last - len(turns) + 1
            stored = [
                Turn(
                    tenant_id=tenant,
                    thread_id=thread_id,
                    seq=first + index,
                    turn_id=str(self._ids.new_id()),
                    role=turn.role,
                    kind=turn.kind,
                    content=turn.content,
                    tokens=size,
                    ref=turn.ref,
                    metadata=turn.metadata,
                    created_at=now,
                    created_by=principal.principal_id,
                )
                for index, (turn, size) in enumerate(zip(turns, sizes, strict=True))
            ]
            txn.insert_thread_turns(stored)
            self._audit.record_by_txn(
                txn,
                principal,
                tenant_id=tenant,
                action="thread.turns_appended",
                target=f"thread:{thread_id}",
                details={
                    "from_seq": first,
                    "to_seq": last,
                    "kinds": dict(Counter(turn.kind.value for turn in turns)),
                },
                subjects=[thread.user_id],
            )
        return stored

    def turns(
        self,
        principal: Principal,
        thread_id: str,
        *,
        from_seq: int = 1,
        to_seq: int | None = None,
        limit: int = 1000,
    ) -> list[Turn]:
        """Turns ``from_seq``..``to_seq`` (inclusive), in order, at most ``limit``."""
        authorize(principal, "threads.turns")
        if from_seq < 1 or (to_seq is not None and to_seq < from_seq):
            raise InvalidInput("give 1 <= from_seq <= to_seq")
        if not 1 <= limit <= 100_000:
            raise InvalidInput("limit must be between 1 and 100000")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            self._get_txn(txn, principal.tenant_id, thread_id)
            return txn.list_thread_turns(
                principal.tenant_id,
                thread_id,
                from_seq=from_seq,
                to_seq=_LAST if to_seq is None else to_seq,
                limit=limit,
            )

    def last_turns(
        self, principal: Principal, thread_id: str, count: int, *, before_seq: int | None = None
    ) -> list[Turn]:
        """The ``count`` most recent turns (of those before ``before_seq``, if given),
        oldest first."""
        authorize(principal, "threads.last_turns")
        if not 1 <= count <= 100_000:
            raise InvalidInput("count must be between 1 and 100000")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            self._get_txn(txn, principal.tenant_id, thread_id)
            newest = txn.list_thread_turns_before(
                principal.tenant_id,
                thread_id,
                before_seq=_LAST if before_seq is None else before_seq,
                limit=count,
            )
        return newest[::-1]

    def tail(self, principal: Principal, thread_id: str, count: int) -> ThreadTail:
        """The thread, its latest summary and its ``count`` most recent turns, read in one
        transaction so the three agree (what a context is built from)."""
        authorize(principal, "threads.tail")
        if not 1 <= count <= 100_000:
            raise InvalidInput("count must be between 1 and 100000")
        tenant = principal.tenant_id
        with self.storage.transaction(tenant, write=False) as txn:
            thread = self._get_txn(txn, tenant, thread_id)
            summary = txn.latest_thread_summary(tenant, thread_id)
            newest = txn.list_thread_turns_before(tenant, thread_id, before_seq=_LAST, limit=count)
        return ThreadTail(thread=thread, summary=summary, turns=newest[::-1])

    def get_turn(self, principal: Principal, turn_id: str) -> Turn:
        """A turn by its id: how a masked observation is read back in full."""
        authorize(principal, "threads.get_turn")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            turn = txn.get_thread_turn(principal.tenant_id, turn_id)
        if turn is None:
            raise NotFound(f"no turn {turn_id} in tenant {principal.tenant_id!r}")
        return turn

    def find_turns(self, principal: Principal, thread_id: str, ref: str) -> list[Turn]:
        """The thread's turns carrying reference ``ref`` (a tool call and its observation
        share one), in order."""
        authorize(principal, "threads.find_turns")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            self._get_txn(txn, principal.tenant_id, thread_id)
            found = txn.list_thread_turns_by_ref(principal.tenant_id, thread_id, ref)
        if not found:
            raise NotFound(f"no turn with reference {ref!r} in thread {thread_id}")
        return found

    # -- summaries -----------------------------------------------------------------------

    def summaries(self, principal: Principal, thread_id: str) -> list[Summary]:
        authorize(principal, "threads.summaries")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            self._get_txn(txn, principal.tenant_id, thread_id)
            return txn.list_thread_summaries(principal.tenant_id, thread_id)

    def summarize(
        self,
        principal: Principal,
        thread_id: str,
        *,
        through_seq: int,
        max_tokens: int = 400,
        summarizer: Summarizer | None = None,
    ) -> Summary | None:
        """Roll the summary forward to cover turns 1..``through_seq``.

        The new summary folds the previous one and the turns after it; it is stored with
        its range and the references of the covered turns it drops. The turns stay.
        Returns ``None`` when the latest summary already covers ``through_seq``.
        """
        authorize(principal, "threads.summarize")
        if max_tokens < 16:
            raise InvalidInput("a summary needs max_tokens of at least 16")
        tenant = principal.tenant_id
        summarizer = summarizer or self.summarizer
        with self.storage.transaction(tenant, write=False) as txn:
            thread = self._get_txn(txn, tenant, thread_id)
            previous = txn.latest_thread_summary(tenant, thread_id)
            start = previous.to_seq + 1 if previous else 1
            end = min(through_seq, thread.last_turn_seq)
            if end < start:
                return None
            turns = txn.list_thread_turns(
                tenant, thread_id, from_seq=start, to_seq=end, limit=MAX_BATCH * 10
            )
        text = summarizer.summarize(
            turns, previous=previous.text if previous else None, max_tokens=max_tokens
        )
        dropped = [] if previous is None else list(previous.dropped_refs)
        for turn in turns:
            ref = turn.ref or (turn.turn_id if turn.kind is TurnKind.OBSERVATION else None)
            if ref and ref not in text and ref not in dropped:
                dropped.append(ref)
        summary = Summary(
            tenant_id=tenant,
            thread_id=thread_id,
            summary_id=str(self._ids.new_id()),
            from_seq=previous.from_seq if previous else 1,
            to_seq=turns[-1].seq if turns else end,
            text=text,
            tokens=self.counter.count(text),
            dropped_refs=dropped,
            summarizer=summarizer.id,
            created_at=self._clock.now(),
            created_by=principal.principal_id,
        )
        with self.storage.transaction(tenant) as txn:
            latest = txn.latest_thread_summary(tenant, thread_id)
            if latest is not None and latest.to_seq >= summary.to_seq:
                return None
            txn.insert_thread_summary(summary)
            self._audit.record_by_txn(
                txn,
                principal,
                tenant_id=tenant,
                action="thread.summarized",
                target=f"thread:{thread_id}",
                details={
                    "summary_id": summary.summary_id,
                    "from_seq": summary.from_seq,
                    "to_seq": summary.to_seq,
                    "summarizer": summary.summarizer,
                },
                subjects=[thread.user_id],
            )
        return summary

    # -- retention, export, erasure ------------------------------------------------------

    def retention_cycle(self, principal: Principal, *, limit: int = 10_000) -> dict[str, int]:
        """Purge the tenant's threads inactive past their retention (clock time), with
        their turns and summaries. Threads under a legal hold (user or conversation
        scope) are kept."""
        authorize(principal, "threads.retention_cycle")
        tenant = principal.tenant_id
        now = self._clock.now()
        counts: Counter[str] = Counter()
        with self.storage.transaction(tenant) as txn:
            holds = set(txn.list_memory_holds(tenant))
            for thread in txn.list_expired_threads(tenant, now=now, limit=limit):
                if is_held(thread, holds):
                    counts["held"] += 1
                    continue
                turns, summaries = txn.delete_thread(tenant, thread.thread_id)
                counts["threads"] += 1
                counts["thread_turns"] += turns
                counts["thread_summaries"] += summaries
            if counts:
                self._audit.record_by_txn(
                    txn,
                    principal,
                    tenant_id=tenant,
                    action="thread.retention",
                    target=f"tenant:{tenant}",
                    details=dict(counts),
                )
        return dict(counts)

    def export_user(self, principal: Principal, user_id: str) -> list[dict[str, Any]]:
        """Every thread of ``user_id`` with its turns and summaries (JSON-ready)."""
        authorize(principal, "threads.export_user")
        with self.storage.transaction(principal.tenant_id, write=False) as txn:
            return export_user_threads_txn(txn, principal.tenant_id, user_id)

    def erase_user(self, principal: Principal, user_id: str) -> dict[str, int]:
        """Delete every thread of ``user_id`` and the working memory of those threads;
        ``app.subjects.erase`` does this too, in the same transaction as the person's
        memories. Like it, the freed pages are then rewritten (see
        ``Storage.compact_after_erasure``)."""
        authorize(principal, "threads.erase_user")
        tenant = principal.tenant_id
        with self.storage.transaction(tenant) as txn:
            counts, sessions = erase_user_threads_txn(txn, tenant, user_id)
            self._audit.record_by_txn(
                txn,
                principal,
                tenant_id=tenant,
                action="thread.user_erased",
                target="subject",
                details=counts,
                subjects=[user_id],
            )
        if sessions and self._erase_sessions is not None:
            erased = self._erase_sessions(principal, sessions)
            if erased:
                counts["working_memory"] = erased
        self.storage.compact_after_erasure()
        return counts

    # -- helpers -------------------------------------------------------------------------

    def _get_txn(self, txn: ThreadStore, tenant_id: str, thread_id: str) -> Thread:
        thread = txn.get_thread(tenant_id, thread_id)
        if thread is None:
            raise NotFound(f"no thread {thread_id} in tenant {tenant_id!r}")
        return thread


def _expiry(now: datetime, retention_days: int | None) -> datetime | None:
    return None if retention_days is None else now + timedelta(days=retention_days)


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InvalidInput(f"{what} must be 1-200 characters")
    if any(ord(ch) < 32 for ch in value) or value != value.strip():
        raise InvalidInput(f"{what} {value!r} has control characters or surrounding spaces")
