"""``RunContext``: what a node uses to do durable work.

Every call a node makes through the context takes the next *position* in the node's
visit. The journal is keyed by (run, node, visit, position), and the idempotency key of an
effect is derived from the same tuple plus the effect's name, so re-running a node after a
crash, a retry or an approval replays what was recorded instead of doing it again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NoReturn

from tether import canonical
from tether.errors import InterruptExpired, RunCancelled, WorkflowChanged
from tether.principals import Role
from tether.redaction import describe_exception
from tether.runs.children import ChildRuns
from tether.runs.claim import Claim, call_may_be_in_flight, idempotency_key
from tether.runs.inbox import InboxMessage, receive_messages
from tether.runs.models import (
    ApprovalDecision,
    ApprovalRequest,
    InterruptReason,
    JournalEntry,
    JournalKind,
    JournalStatus,
    Risk,
    Usage,
    WaitStatus,
)
from tether.runs.policy_gate import PolicyGate, check_allowed
from tether.runs.signals import CALL_ENDED, IN_FLIGHT, INTERRUPTED, NotApplied, Suspend


@dataclass
class _Pending:
    """An effect between its intent and its result."""

    position: int
    name: str
    key: str
    digest: str
    retry_safe: bool
    started: float
    started_at: datetime


class RunContext:
    """Handed to every node. Not thread-safe; one per node visit.

    It writes through its :class:`~tether.runs.claim.Claim`, asking the claim's policy gate
    before an effect's intent; ``journal`` holds what earlier runs of this visit recorded.
    """

    def __init__(
        self,
        claim: Claim,
        gate: PolicyGate,
        node: str,
        visit: int,
        journal: Mapping[int, JournalEntry],
    ) -> None:
        self._claim = claim
        self._gate = gate
        self.node = node
        self.visit = visit
        self._journal = dict(journal)
        self._position = 0
        self.changed: WorkflowChanged | None = None

    @property
    def run_id(self) -> str:
        return self._claim.run.run_id

    @property
    def tenant_id(self) -> str:
        return self._claim.run.tenant_id

    @property
    def requested_by(self) -> str:
        """The principal that started the run (it acts through the run)."""
        return self._claim.run.created_by

    def now(self) -> datetime:
        """The engine's clock. Journal it with ``step`` if a decision depends on it."""
        return self._claim.clock.now()

    @property
    def children(self) -> ChildRuns:
        """Start child runs and wait for them durably: ``ctx.children.start(...)``."""
        return ChildRuns(self._claim, self.node, self.visit, self._take)

    @property
    def fencing_token(self) -> int:
        """The epoch of this claim's lease: it grows with every claim of the run. Send it
        with an effect's idempotency key so the service can refuse a call from a worker
        whose lease was taken over (a larger token for the run was seen since)."""
        return self._claim.run.lease_epoch

    def idempotency_key(self, position: int, name: str) -> str:
        """The call's key; as journaled if it was (an older scheme's key is kept)."""
        entry = self._journal.get(position)
        if entry is not None and entry.name == name:
            return entry.idempotency_key
        run = self._claim.run
        return idempotency_key(run.tenant_id, run.run_id, self.node, self.visit, position, name)

    # -- journal bookkeeping -------------------------------------------------------------

    def _take(self, name: str, kind: JournalKind) -> tuple[int, JournalEntry | None]:
        self._position += 1
        entry = self._journal.get(self._position)
        if entry is not None and (entry.name != name or entry.kind is not kind):
            self.changed = WorkflowChanged(
                f"run {self.run_id}, node {self.node!r}: position {self._position} recorded "
                f"{entry.kind.value} {entry.name!r} but the code now calls {kind.value} "
                f"{name!r}. Changed code needs a new workflow version"
            )
            raise self.changed
        return self._position, entry

    def _entry(self, position: int, name: str, kind: JournalKind, **fields: Any) -> JournalEntry:
        fields.setdefault("idempotency_key", self.idempotency_key(position, name))
        return self._claim.journal_entry(self.node, self.visit, position, name, kind, **fields)

    def _check_cancel(self) -> None:
        if self._claim.run.cancel_requested:
            raise RunCancelled()

    # -- steps ---------------------------------------------------------------------------

    def step(
        self, name: str, fn: Callable[[], Any], *, usage: Callable[[Any], Usage] | None = None
    ) -> Any:
        """Journal non-deterministic work that is not a side effect (a model call, a clock
        read, a random draw) so that a re-run of this node decides the same thing.

        The result must be JSON-serialisable; the value returned is its JSON round trip,
        the same on the first run and on replay. ``usage`` extracts tokens and cost.
        """
        replayed, position = self._step_begin(name)
        if replayed is not None:
            return replayed[0]
        started = time.perf_counter()
        return self._step_finish(position, name, fn(), started, usage)

    async def step_async(
        self,
        name: str,
        fn: Callable[[], Awaitable[Any]],
        *,
        usage: Callable[[Any], Usage] | None = None,
    ) -> Any:
        """``step`` for an ``async`` function."""
        replayed, position = self._step_begin(name)
        if replayed is not None:
            return replayed[0]
        started = time.perf_counter()
        return self._step_finish(position, name, await fn(), started, usage)

    def _step_begin(self, name: str) -> tuple[tuple[Any] | None, int]:
        self._check_cancel()
        position, entry = self._take(name, JournalKind.STEP)
        if entry is not None and entry.status is JournalStatus.DONE:
            return (canonical.loads(entry.result or "null"),), position
        return None, position

    def _step_finish(
        self,
        position: int,
        name: str,
        value: Any,
        started: float,
        usage: Callable[[Any], Usage] | None,
    ) -> Any:
        text = canonical.dumps(value)
        duration = (time.perf_counter() - started) * 1000
        cost = usage(value) if usage else None
        entry = self._claim.journal_entry(
            self.node,
            self.visit,
            position,
            name,
            JournalKind.STEP,
            result=text,
            finished_at=self.now(),
            duration_ms=duration,
            tokens_in=cost.tokens_in if cost else None,
            tokens_out=cost.tokens_out if cost else None,
            cost_usd=cost.cost_usd if cost else None,
        )
        self._journal[position] = entry
        self._claim.buffer_step(entry)
        return canonical.loads(text)

    def receive(self) -> list[InboxMessage]:
        """Messages sent to the run (``app.inbox.send``) since it last read; journaled."""
        return receive_messages(self.step, self._claim)

    # -- effects -------------------------------------------------------------------------

    def effect(
        self,
        name: str,
        fn: Callable[[str], Any],
        *,
        request: Any = None,
        retry_safe: bool = False,
        reconcile: Callable[[str], Any] | None = None,
        guard: Callable[[], str | None] | None = None,
        approval: ApprovalDecision | None = None,
        timeout_s: float | None = None,
        labels: Sequence[str] = (),
    ) -> Any:
        """Perform a side effect at most once per key; return its (recorded) result.

        ``fn(key)`` receives the idempotency key; pass it to the service, with
        :attr:`fencing_token` if the service can refuse stale writers. Its intent is
        committed before the call and its result after. If a crash left an intent without
        a result, ``reconcile(key)`` decides (return the result, or ``NOT_APPLIED``);
        without one the effect is called again with the same key only if ``retry_safe``
        (the service dedupes by key), and otherwise the run goes to ``human_review``. An
        intent left open was interrupted mid-effect, whichever way the run comes back (a
        takeover, a resume, a retry): its worker may be paused with the call in flight, so
        ``NOT_APPLIED`` is not enough to call again and a non-retry-safe effect goes to
        ``human_review`` too, unless that worker handed the run back after a storage
        fault with its call over.

        Args:
            request: the content of the action (what is digested and, with ``approval``,
                must match what was approved).
            guard: re-checks the facts the action depends on just before it; returns a
                reason to refuse, or ``None``.
            approval: the decision gating this effect; the effect refuses an action whose
                digest differs from the approved one.
            timeout_s: give up waiting after this long; the outcome is then unknown and is
                settled like a crash.
            labels: declared labels published policies may match on (besides the effect's
                name, its request and the workflow's name).

        Before the intent is recorded, the first time only, the policies in force decide
        (see ``docs/procedures.md``): the effect may wait for an approval, park the run in
        ``human_review``, fail the run, or run with a warning. The decision is journaled
        with the intent and replayed, never re-evaluated.
        """
        decision = self._effect_begin(name, request, retry_safe, reconcile, guard, approval, labels)
        if not isinstance(decision, _Pending):
            return decision[0]
        try:
            with self._claim.call(decision.key):
                if timeout_s is None:
                    result = fn(decision.key)
                else:
                    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
                    try:
                        result = pool.submit(fn, decision.key).result(timeout=timeout_s)
                    finally:
                        pool.shutdown(wait=False)
        except concurrent.futures.TimeoutError:
            return self._effect_timed_out(decision, reconcile, timeout_s)
        except Exception as exc:
            self._effect_failed(decision, exc)
            raise
        return self._effect_done(decision, result)

    async def effect_async(
        self,
        name: str,
        fn: Callable[[str], Awaitable[Any]],
        *,
        request: Any = None,
        retry_safe: bool = False,
        reconcile: Callable[[str], Any] | None = None,
        guard: Callable[[], str | None] | None = None,
        approval: ApprovalDecision | None = None,
        timeout_s: float | None = None,
        labels: Sequence[str] = (),
    ) -> Any:
        """``effect`` for an ``async`` function (a timeout cancels the coroutine)."""
        decision = self._effect_begin(name, request, retry_safe, reconcile, guard, approval, labels)
        if not isinstance(decision, _Pending):
            return decision[0]
        try:
            with self._claim.call(decision.key):
                result = await asyncio.wait_for(fn(decision.key), timeout_s)
        except TimeoutError:
            return self._effect_timed_out(decision, reconcile, timeout_s)
        except Exception as exc:
            self._effect_failed(decision, exc)
            raise
        return self._effect_done(decision, result)

    def _effect_begin(
        self,
        name: str,
        request: Any,
        retry_safe: bool,
        reconcile: Callable[[str], Any] | None,
        guard: Callable[[], str | None] | None,
        approval: ApprovalDecision | None,
        labels: Sequence[str] = (),
    ) -> _Pending | tuple[Any]:
        self._check_cancel()
        position, entry = self._take(name, JournalKind.EFFECT)
        key = self.idempotency_key(position, name)
        digest = canonical.digest(request)
        claim = self._claim
        if entry is not None and entry.status is JournalStatus.DONE:
            if entry.request_digest != digest:
                self.changed = WorkflowChanged(
                    f"effect {name!r} ({key}) was recorded with a different request than "
                    "the code makes now; the workflow is not deterministic"
                )
                raise self.changed
            return (canonical.loads(entry.result or "null"),)
        resumed = entry is not None and entry.status is JournalStatus.INTENT
        if entry is not None and resumed and entry.request_digest != digest:
            self.changed = WorkflowChanged(
                f"effect {name!r} ({key}) was started with a different request than the code "
                "makes now; it will not be sent again under the same key"
            )
            raise self.changed
        if entry is not None and resumed:
            settled = self._settle_unknown(entry, key, reconcile, retry_safe)
            if settled is not None:
                return settled
        try:
            policy_version, policy_events = self._gate.enforce(
                self._journal, self.node, self.visit, position, name, key, request, labels
            )
        except WorkflowChanged as changed:
            self.changed = changed
            raise
        # The guard passed before the intent was recorded; after a crash the effect itself
        # may have changed the facts it checks, so a re-execution is not re-guarded.
        check_allowed(name, key, digest, None if resumed else guard, approval)
        pending = _Pending(position, name, key, digest, retry_safe, time.perf_counter(), self.now())
        claim.crash_point("before_intent", key)
        intent = self._entry(
            position,
            name,
            JournalKind.EFFECT,
            status=JournalStatus.INTENT,
            request_digest=digest,
            retry_safe=retry_safe,
            started_at=pending.started_at,
        )
        claim.unsettled[key] = intent
        intent_data: dict[str, Any] = {"name": name, "key": key, "fence": self.fencing_token}
        if policy_version is not None:
            intent_data["policy_version"] = policy_version
        claim.commit(
            journal=[intent], events=[*policy_events, ("effect.intent", intent_data, None)]
        )
        self._journal[position] = intent
        claim.crash_point("after_intent", key)
        claim.ensure_lease()
        return pending

    def _settle_unknown(
        self,
        entry: JournalEntry,
        key: str,
        reconcile: Callable[[str], Any] | None,
        retry_safe: bool,
    ) -> tuple[Any] | None:
        """A crash left an intent without a result: decide without guessing."""
        claim = self._claim
        review = claim.waits.get(entry.wait_id or "")
        if review is not None and review.status is WaitStatus.ANSWERED:
            answer = (review.resolution or {}).get("answer")
            if isinstance(answer, dict) and answer.get("retry") is True:
                return None
            if isinstance(answer, dict) and "result" in answer:
                return (self._record_settled(entry, answer["result"], "operator"),)
        if reconcile is not None:
            found = reconcile(key)
            if not isinstance(found, NotApplied):
                return (self._record_settled(entry, found, "reconcile"),)
        in_flight = call_may_be_in_flight(entry)
        if retry_safe or (reconcile is not None and not in_flight):
            return None
        self._review_unknown(entry, key, INTERRUPTED if in_flight else CALL_ENDED)

    def _review_unknown(self, entry: JournalEntry, key: str, why: str) -> NoReturn:
        """Park the run for a person to say whether the effect happened."""
        wait = self._claim.new_wait(
            self.node,
            self.visit,
            entry.position,
            JournalKind.INTERRUPT,
            InterruptReason.HUMAN_REVIEW,
            f"effect {entry.name!r} ({key}) {why}. "
            'Check the service, then answer {"result": <its result>} or {"retry": true}',
            {"effect": entry.name, "idempotency_key": key},
        )
        raise Suspend(wait, entry.model_copy(update={"wait_id": wait.wait_id}), "effect.unknown")

    def _record_settled(self, entry: JournalEntry, result: Any, how: str) -> Any:
        text = canonical.dumps(result)
        done = entry.model_copy(
            update={"status": JournalStatus.DONE, "result": text, "finished_at": self.now()}
        )
        self._claim.commit(
            journal=[done],
            events=[
                (
                    "effect.settled",
                    {"name": entry.name, "key": entry.idempotency_key, "by": how},
                    None,
                )
            ],
        )
        self._journal[entry.position] = done
        return canonical.loads(text)

    def _effect_timed_out(
        self, pending: _Pending, reconcile: Callable[[str], Any] | None, timeout_s: float | None
    ) -> Any:
        """The effect may or may not have happened: settle it as after a crash, except that
        a retry-safe effect is retried later (by the node's retry policy) rather than now,
        while the timed-out call may still be running."""
        entry = self._journal[pending.position]
        if reconcile is not None:
            found = reconcile(pending.key)
            if not isinstance(found, NotApplied):
                return self._record_settled(entry, found, "reconcile")
        if pending.retry_safe:
            raise TimeoutError(
                f"effect {pending.name!r} ({pending.key}) timed out after {timeout_s}s"
            )
        self._review_unknown(entry, pending.key, f"timed out after {timeout_s}s; {IN_FLIGHT}")

    def _effect_done(self, pending: _Pending, result: Any) -> Any:
        claim = self._claim
        claim.crash_point("after_effect", pending.key)
        text = canonical.dumps(result)
        done = self._entry(
            pending.position,
            pending.name,
            JournalKind.EFFECT,
            request_digest=pending.digest,
            retry_safe=pending.retry_safe,
            result=text,
            started_at=pending.started_at,
            finished_at=self.now(),
            duration_ms=(time.perf_counter() - pending.started) * 1000,
        )
        claim.commit(
            journal=[done],
            events=[("effect.done", {"name": pending.name, "key": pending.key}, done.duration_ms)],
            cancellable=False,
        )
        self._journal[pending.position] = done
        claim.crash_point("after_result", pending.key)
        return canonical.loads(text)

    def _effect_failed(self, pending: _Pending, exc: Exception) -> None:
        failed = self._entry(
            pending.position,
            pending.name,
            JournalKind.EFFECT,
            status=JournalStatus.FAILED,
            request_digest=pending.digest,
            retry_safe=pending.retry_safe,
            error=describe_exception(exc),
            started_at=pending.started_at,
            finished_at=self.now(),
            duration_ms=(time.perf_counter() - pending.started) * 1000,
        )
        self._claim.commit(
            journal=[failed],
            events=[
                (
                    "effect.failed",
                    {"name": pending.name, "key": pending.key, "error": failed.error},
                    failed.duration_ms,
                )
            ],
            cancellable=False,
        )
        self._journal[pending.position] = failed

    # -- waits ---------------------------------------------------------------------------

    def interrupt(
        self,
        reason: InterruptReason | str,
        message: str,
        *,
        payload: Mapping[str, Any] | None = None,
        expires_in: timedelta | None = None,
        resume_at: datetime | None = None,
    ) -> Any:
        """Park the run until someone answers (or, for timed reasons, until ``resume_at``).

        Returns the answer once there is one. The node runs again from its start when the
        run resumes; everything journaled before this call is replayed, not repeated.

        Raises:
            InterruptExpired: the question expired unanswered.
        """
        reason = InterruptReason(reason)
        self._check_cancel()
        name = f"interrupt:{reason.value}"
        position, entry = self._take(name, JournalKind.INTERRUPT)
        if entry is not None:
            if entry.status is JournalStatus.DONE:
                return canonical.loads(entry.result or "null")
            wait = self._claim.waits.get(entry.wait_id or "")
            if wait is not None and wait.status is WaitStatus.EXPIRED:
                raise InterruptExpired(f"{reason.value} question {wait.wait_id} expired unanswered")
            if wait is not None and wait.resume_at is not None and wait.resume_at <= self.now():
                self._journal[position] = self._claim.resume_due_wait(wait, entry)
                return None
        if (
            reason in (InterruptReason.RATE_LIMITED, InterruptReason.SCHEDULED_RESUME)
            and resume_at is None
        ):
            raise ValueError(f"a {reason.value} interrupt needs resume_at")
        if reason in (InterruptReason.APPROVAL_REQUIRED, InterruptReason.CHILD_RUNS):
            raise ValueError(f"use ctx.approval(...) or ctx.children.start(...) for {reason}")
        wait = self._claim.new_wait(
            self.node,
            self.visit,
            position,
            JournalKind.INTERRUPT,
            reason,
            message,
            dict(payload or {}),
            expires_in=expires_in,
            resume_at=resume_at,
        )
        intent = self._entry(
            position, name, JournalKind.INTERRUPT, status=JournalStatus.INTENT, wait_id=wait.wait_id
        )
        raise Suspend(wait, intent, "interrupt.raised")

    def approval(
        self,
        action: Mapping[str, Any],
        *,
        rationale: str,
        title: str | None = None,
        evidence: Sequence[str] = (),
        risk: Risk | str = Risk.MEDIUM,
        alternatives: Sequence[str] = (),
        on_approve: str = "",
        on_reject: str = "",
        approver_role: Role | str = Role.APPROVER,
        expires_in: timedelta | None = timedelta(days=7),
    ) -> ApprovalDecision:
        """Ask for a human decision on ``action`` and return it once made.

        The request carries a digest of the exact action; pass the decision to the
        ``effect`` it gates (``approval=``) and that effect refuses any other action.
        """
        self._check_cancel()
        position, entry = self._take("approval", JournalKind.APPROVAL)
        if entry is not None and entry.status is JournalStatus.DONE:
            return ApprovalDecision.model_validate_json(entry.result or "{}")
        title_text = title or f"approve {self.node}"
        request = ApprovalRequest(
            title=title_text,
            action=dict(action),
            rationale=rationale,
            evidence=list(evidence),
            risk=Risk(risk),
            alternatives=list(alternatives),
            on_approve=on_approve,
            on_reject=on_reject,
        ).model_dump(mode="json")
        wait = self._claim.new_wait(
            self.node,
            self.visit,
            position,
            JournalKind.APPROVAL,
            InterruptReason.APPROVAL_REQUIRED,
            title_text,
            request,
            expires_in=expires_in,
            action_digest=canonical.digest(dict(action)),
            approver_role=Role(approver_role).value,
        )
        intent = self._entry(
            position,
            "approval",
            JournalKind.APPROVAL,
            status=JournalStatus.INTENT,
            wait_id=wait.wait_id,
        )
        raise Suspend(wait, intent, "approval.requested")
