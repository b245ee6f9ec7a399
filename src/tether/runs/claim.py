"""``Claim``: what one executor holds of one run it claimed, and the one write path.

When an executor claims a run it builds a :class:`Claim` for everything that belongs to
that claim alone: the run row as last written, its waits, the state as last checkpointed,
the procedures in force, and the journal entries and closed waits that ride on the next
write. The executor keeps only what outlives a claim.

Every durable write goes through :meth:`Claim.commit`, one transaction that first
re-writes the run row *only if* it is still at the version and lease this claim holds.
If another worker took the run over, the write matches no row, nothing commits and the
claim ends (:class:`~tether.errors.LeaseLost`). The same statement returns whether
someone asked to cancel the run, so cancellation is checked before every node and effect
at no extra cost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tether import canonical
from tether.clock import Clock
from tether.errors import LeaseLost, RunCancelled, StorageUnavailable
from tether.ids import IdSource
from tether.runs import delta
from tether.runs.models import (
    PAUSE_REQUEST,
    Checkpoint,
    InterruptReason,
    JournalEntry,
    JournalKind,
    JournalStatus,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.runs.signals import EventSpec
from tether.storage.base import StepWrite, Storage
from tether.storage.stores import RunStore
from tether.validation import check_text, check_value

if TYPE_CHECKING:
    from tether.procedures.loader import ProcedureSet

FaultHook = Callable[[str, str], None]
"""``hook(point, key)`` called at each persistence boundary; tests raise from it to crash."""


def load_state_dict(txn: RunStore, run: Run) -> tuple[dict[str, Any], int]:
    """Rebuild a run's state from its last full snapshot and the deltas after it."""
    checkpoints = txn.list_checkpoints(run.tenant_id, run.run_id, from_seq=run.full_seq)
    state: dict[str, Any] = {}
    version = run.state_version
    for checkpoint in checkpoints:
        payload = canonical.loads(checkpoint.payload)
        state = payload if checkpoint.kind == "full" else delta.apply(state, payload)
        version = checkpoint.state_version
    return state, version


def call_may_be_in_flight(entry: JournalEntry) -> bool:
    """Whether an effect's intent without a result may have a call still on its way.

    This is read from the journal alone, so every way a run comes back (a lease
    takeover, an operator's resume, a retry from the checkpoint) decides alike: an intent
    left open was interrupted mid-effect, and the worker that wrote it may be paused with
    its call in flight, unless that worker handed the run back after a storage fault and
    marked the intent with the time its call ended (``finished_at``).
    """
    return entry.status is JournalStatus.INTENT and entry.finished_at is None


def idempotency_key(
    tenant_id: str, run_id: str, node: str, visit: int, position: int, name: str
) -> str:
    """The key of a journaled call: the same on every re-run of the same node visit.

    It starts with a digest of the tenant, so two tenants never send a service the same
    key, even for runs whose ids their callers chose alike. (Calls journaled before the
    digest was added keep the key they were journaled with; see ``RunContext``.)
    """
    tenant = hashlib.sha256(tenant_id.encode()).hexdigest()[:16]
    return f"{tenant}:{run_id}:{node}:{visit}:{position}:{name}"


class Claim:
    """One run as claimed, from the claim until the run waits, ends or is taken over.

    Not thread-safe. ``run`` is the run row as this claim last wrote it (its ``version``
    guards the next write); ``waits`` are the run's waits by id, as of the claim (read
    only when an entry of ``first_journal`` refers to one: nothing else looks them up)
    plus those this claim opened or closed; ``state`` and ``state_version`` are the state the
    last checkpoint stored, and ``live`` the model a node changed since (``None`` when it
    must be rebuilt from ``state``); ``first_journal`` holds the journal entries of the
    node visit the claim resumes, handed to that visit's context once.

    ``taken_over`` says the claim took the run from another worker whose lease ran out
    (rather than finding it handed back, or left by this same worker, which drives one
    claim at a time); it is counted and reported, never used to decide whether an effect
    is sent again: that is read from the journal (:func:`call_may_be_in_flight`).
    The heartbeat thread calls only :meth:`renewed` and :meth:`lose`.
    """

    def __init__(
        self,
        run: Run,
        *,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        owner: str,
        lease: timedelta,
        faults: FaultHook | None,
        waits: dict[str, Wait],
        state: dict[str, Any],
        state_version: int,
        first_journal: dict[int, JournalEntry],
        policies: ProcedureSet | None,
        taken_over: bool = False,
    ) -> None:
        self.run = run
        self.storage = storage
        self.clock = clock
        self.ids = ids
        self.owner = owner
        self.lease = lease
        self.faults = faults
        self.waits = waits
        self.state = state
        self.state_version = state_version
        self.live: BaseModel | None = None
        self.first_journal = first_journal
        self.policies = policies
        """The procedures in force for the run's tenant, read with the claim."""
        self.taken_over = taken_over
        self.expires_at = run.lease_expires_at or clock.now() + lease
        """When the lease runs out, as far as this claim knows (its writes and the
        heartbeat's renewals push it on)."""
        self.lost: str | None = None
        """Why the claim must stop (set by the heartbeat), or ``None``."""
        self.fault: StorageUnavailable | None = None
        """The storage fault that stopped a write of this claim: every later write refuses,
        even if the node caught the error and went on."""
        self.unsettled: dict[str, JournalEntry] = {}
        """The effect intents this claim wrote (or tried to) whose result or failure it
        has not recorded, by idempotency key."""
        self.calling: set[str] = set()
        """Keys of the effects whose call may still be running in this process (a call
        that timed out stays here: its thread may go on)."""
        self._buffered: list[JournalEntry] = []
        self._resolutions: list[Wait] = []

    # -- the lease -----------------------------------------------------------------------

    def renewed(self, expires_at: datetime) -> None:
        """The heartbeat extended the lease to ``expires_at``."""
        self.expires_at = max(self.expires_at, expires_at)

    def lose(self, reason: str) -> None:
        """The lease cannot be trusted any more: stop before the next durable write."""
        self.lost = reason

    def stop_requested(self) -> tuple[RunStatus, str, dict[str, Any]]:
        """What the stop request that ended the claim asks for: the status, the event
        and its data (the reason stored with the request). A request marked
        :data:`PAUSE_REQUEST` pauses the run; any other cancels it."""
        with self.storage.transaction(self.run.tenant_id, write=False) as txn:
            current = txn.get_run(self.run.tenant_id, self.run.run_id)
        reason = (current.cancel_reason if current else None) or ""
        if reason.startswith(PAUSE_REQUEST):
            return RunStatus.PAUSED, "run.paused", {"reason": reason.removeprefix(PAUSE_REQUEST)}
        return RunStatus.CANCELLED, "run.cancelled", {"reason": reason}

    def ensure_lease(self) -> None:
        """Refuse to go on (an effect's call, above all) once the lease is lost or has run
        out: another worker may own the run.

        Raises:
            LeaseLost: the heartbeat lost the lease, or it expired (the process was paused).
        """
        if self.lost is not None or self.clock.now() >= self.expires_at:
            raise LeaseLost()

    def crash_point(self, point: str, key: str) -> None:
        """A persistence boundary: the faults hook, if any, may raise here."""
        if self.faults is not None:
            self.faults(point, key)

    @contextmanager
    def call(self, key: str) -> Iterator[None]:
        """Around an effect's call: while it runs, and after it timed out, the call may
        still reach the service; once it returned or raised, it cannot."""
        self.calling.add(key)
        try:
            yield
        except TimeoutError:
            raise
        except BaseException:
            self.calling.discard(key)
            raise
        self.calling.discard(key)

    def ended_calls(self) -> list[JournalEntry]:
        """The intents of this claim whose call is over (or never started) but whose
        outcome was not recorded: what a hand-back marks so that the next claim knows the
        call is not in flight."""
        return [entry for key, entry in self.unsettled.items() if key not in self.calling]

    # -- what rides on the next write ----------------------------------------------------

    def resume_due_wait(self, wait: Wait, entry: JournalEntry) -> JournalEntry:
        """A timed wait has come due: close it (if still open) and mark its interrupt
        ``entry`` done, both with the next write. Returns the done entry."""
        if wait.status is WaitStatus.OPEN:
            answered = wait.model_copy(
                update={
                    "status": WaitStatus.ANSWERED,
                    "resolved_at": self.clock.now(),
                    "resolved_by": self.owner,
                    "resolution": {"resumed_at": self.clock.now()},
                }
            )
            self._resolutions.append(answered)
            self.waits[wait.wait_id] = answered
        done = entry.model_copy(
            update={"status": JournalStatus.DONE, "result": "null", "finished_at": self.clock.now()}
        )
        self._buffered.append(done)
        return done

    def buffer_step(self, entry: JournalEntry) -> None:
        """Steps become durable with the next write (nothing durable can depend on them
        before that), so they cost no commit of their own."""
        self._buffered.append(entry)

    def buffered_results(self, name: str) -> list[str]:
        """The results of buffered (not yet written) steps called ``name``."""
        return [e.result for e in self._buffered if e.name == name and e.result is not None]

    def discard_steps(self) -> None:
        """Forget the buffered steps of a node visit that failed or was refused: its
        re-run decides them afresh."""
        self._buffered = []

    # -- rows ----------------------------------------------------------------------------

    def journal_entry(
        self, node: str, visit: int, position: int, name: str, kind: JournalKind, **fields: Any
    ) -> JournalEntry:
        """A journal entry of this run at ``position`` of the node visit; ``fields``
        override the defaults (a finished call with no result, started now).

        Raises:
            InvalidInput: ``name`` cannot be stored (the node fails, as for its state)."""
        check_text("name", name)
        run = self.run
        values: dict[str, Any] = {
            "tenant_id": run.tenant_id,
            "run_id": run.run_id,
            "node": node,
            "visit": visit,
            "position": position,
            "name": name,
            "kind": kind,
            "idempotency_key": idempotency_key(
                run.tenant_id, run.run_id, node, visit, position, name
            ),
            "status": JournalStatus.DONE,
            "request_digest": "",
            "result": None,
            "error": None,
            "retry_safe": False,
            "started_at": self.clock.now(),
            "finished_at": None,
            "duration_ms": None,
            "tokens_in": None,
            "tokens_out": None,
            "cost_usd": None,
            "wait_id": None,
        }
        values.update(fields)
        return JournalEntry(**values)

    def new_wait(
        self,
        node: str,
        visit: int,
        position: int,
        kind: JournalKind,
        reason: InterruptReason,
        message: str,
        request: dict[str, Any],
        *,
        expires_in: timedelta | None = None,
        resume_at: datetime | None = None,
        action_digest: str | None = None,
        approver_role: str | None = None,
    ) -> Wait:
        """An open wait of this run, to be written by the commit that parks the run.

        Raises:
            InvalidInput: ``message`` or ``request`` cannot be stored (the node fails)."""
        check_text("message", message)
        check_value("request", request)
        now = self.clock.now()
        return Wait(
            tenant_id=self.run.tenant_id,
            wait_id=str(self.ids.new_id()),
            run_id=self.run.run_id,
            node=node,
            visit=visit,
            position=position,
            kind=kind,
            reason=reason,
            status=WaitStatus.OPEN,
            message=message,
            request=request,
            action_digest=action_digest,
            approver_role=approver_role,
            requested_by=self.run.created_by,
            resume_at=resume_at,
            expires_at=now + expires_in if expires_in else None,
            created_at=now,
            resolved_at=None,
            resolved_by=None,
            resolution=None,
        )

    def event(
        self,
        seq: int,
        type_: str,
        data: dict[str, Any],
        duration: float | None,
        node: str | None,
        at: datetime | None = None,
    ) -> RunEvent:
        """An event of this run at ``seq`` (the commit numbers the events it writes),
        at ``at`` (default: now)."""
        return RunEvent(
            tenant_id=self.run.tenant_id,
            run_id=self.run.run_id,
            seq=seq,
            at=at or self.clock.now(),
            type=type_,
            node=node,
            duration_ms=duration,
            data=data,
        )

    # -- the one write path --------------------------------------------------------------

    def commit(
        self,
        *,
        journal: Sequence[JournalEntry] = (),
        events: Iterable[EventSpec] = (),
        checkpoint: Checkpoint | None = None,
        waits: Sequence[Wait] = (),
        changes: dict[str, Any] | None = None,
        node: str | None = None,
        cancellable: bool = True,
        children: Sequence[tuple[Run, Checkpoint, RunEvent]] = (),
        now: datetime | None = None,
    ) -> None:
        """Write one transaction guarded by this claim's version and lease, at ``now``
        (default: the clock's time; the run's update time and its events' time).

        The buffered steps and wait resolutions go first, with ``journal``.

        Raises:
            LeaseLost: another worker owns the run now, or the heartbeat lost the lease;
                nothing was written.
            RunCancelled: cancellation was requested (and ``cancellable``); nothing written.
            StorageUnavailable: storage failed (this time or at an earlier write of this
                claim); the outcome of this write is unknown.
        """
        if self.fault is not None:
            raise self.fault
        if self.lost is not None:
            raise LeaseLost()
        run = self.run
        now = now or self.clock.now()
        where = node or run.current_node
        rows = [
            self.event(run.event_seq + i, type_, data, duration, where, now)
            for i, (type_, data, duration) in enumerate(events, start=1)
        ]
        update: dict[str, Any] = {
            "version": run.version + 1,
            "lease_expires_at": now + self.lease,
            "event_seq": run.event_seq + len(rows),
            "updated_at": now,
            "updated_by": self.owner,
        }
        update.update(changes or {})
        if update.get("status") not in (None, RunStatus.SCHEDULED):
            update.setdefault("resume_at", None)
        # The run as the guarded update leaves it (which also adds one to its version), so
        # a step makes one copy of the row, not two.
        new_run = run.model_copy(update=update)
        write = StepWrite(
            run=new_run,
            expected_version=run.version,
            expected_owner=self.owner,
            cancellable=cancellable,
            journal=[*self._buffered, *journal],
            checkpoint=checkpoint,
            waits=waits,
            resolved=self._resolutions,
            events=rows,
            children=children,
        )
        try:
            version, cancel = self.storage.write_step(write)
        except RunCancelled:
            self.run = run.model_copy(update={"cancel_requested": True})
            raise
        except StorageUnavailable as exc:
            self.fault = exc
            raise
        if new_run.lease_expires_at is not None:
            self.expires_at = max(self.expires_at, new_run.lease_expires_at)
        for entry in write.journal:
            if entry.status is not JournalStatus.INTENT:
                self.unsettled.pop(entry.idempotency_key, None)
        self._buffered = []
        self._resolutions = []
        if version != new_run.version or cancel != new_run.cancel_requested:
            new_run = new_run.model_copy(update={"version": version, "cancel_requested": cancel})
        self.run = new_run
