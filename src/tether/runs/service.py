"""The run API: start runs, read them, answer their questions, decide approvals.

Every method takes the acting :class:`~tether.principals.Principal`; its tenant scopes
every read and write, and its roles decide what it may do. The operator's actions on a
run (pause, resume, cancel, retry, skip, complete, fork) are ``app.runbook``
(:mod:`tether.runs.runbook`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, PermissionDenied
from tether.ids import IdSource, parse_id
from tether.permissions import authorize, check_wait_answer
from tether.principals import SYSTEM_ACTOR, Principal, Role
from tether.runs.children import child_results_txn, created_event, new_run
from tether.runs.claim import load_state_dict
from tether.runs.handoff import HandoffDocument, build_handoff
from tether.runs.listing import RunQuery
from tether.runs.models import (
    FINISHED,
    ApprovalDecision,
    Checkpoint,
    InterruptReason,
    JournalEntry,
    JournalKind,
    Run,
    RunEvent,
    RunStatus,
    Wait,
    WaitStatus,
)
from tether.runs.stuck import StuckRun, StuckThresholds, find_stuck
from tether.runs.transitions import RunWriter
from tether.runs.workflow import Workflow, WorkflowRegistry
from tether.storage.base import Storage
from tether.storage.stores import RunStore
from tether.validation import guarded, integer, one_of, rules

MAX_PRIORITY = 1000
"""Priorities run from ``-MAX_PRIORITY`` to ``MAX_PRIORITY``; the default is 0."""


@guarded
class Runs:
    """``app.runs``: everything about runs except executing nodes (see ``Executor``)."""

    def __init__(self, storage: Storage, clock: Clock, ids: IdSource, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._audit = audit
        self._writer = RunWriter(clock)

    # -- starting and reading ------------------------------------------------------------

    def start(
        self,
        principal: Principal,
        workflow: Workflow[Any],
        state: BaseModel | Mapping[str, Any],
        *,
        run_id: str | None = None,
        max_steps: int | None = None,
        deadline: datetime | None = None,
        priority: int = 0,
    ) -> Run:
        """Create a queued run of ``workflow`` (pinned to its version) with ``state``.

        Workers claim runs of a higher ``priority`` first (from -1000 to 1000)."""
        authorize(principal, "runs.start")
        if not -MAX_PRIORITY <= priority <= MAX_PRIORITY:
            raise InvalidInput(f"priority must be between {-MAX_PRIORITY} and {MAX_PRIORITY}")
        run_id = str(parse_id(run_id, what="run id")) if run_id else str(self._ids.new_id())
        run, checkpoint = new_run(
            workflow,
            state,
            tenant_id=principal.tenant_id,
            run_id=run_id,
            created_by=principal.principal_id,
            now=self._clock.now(),
            max_steps=max_steps,
            deadline=deadline,
            priority=priority,
        )
        # No read for an existing run first: the insert's key refuses a taken id, and only
        # then is the run looked for, to say why.
        try:
            with self._storage.transaction(principal.tenant_id) as txn:
                txn.insert_run(run)
                txn.insert_checkpoint(checkpoint)
                txn.insert_events([created_event(run, workflow, {})])
                self._audit.record_by_txn(
                    txn,
                    principal,
                    tenant_id=run.tenant_id,
                    action="run.started",
                    target=f"run:{run_id}",
                    details={"workflow": workflow.key},
                )
        except Conflict:
            with self._storage.transaction(principal.tenant_id, write=False) as txn:
                taken = txn.get_run(principal.tenant_id, run_id) is not None
            if taken:
                raise Conflict(f"run {run_id} already exists") from None
            raise
        return run

    def get(self, principal: Principal, run_id: str) -> Run:
        authorize(principal, "runs.get")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return self._writer.get_txn(txn, principal.tenant_id, run_id)

    @rules(status=one_of(RunStatus))
    def all(
        self, principal: Principal, *, status: RunStatus | str | None = None, limit: int = 100
    ) -> list[Run]:
        authorize(principal, "runs.all")
        wanted = RunStatus(status).value if status else None
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return txn.list_runs(principal.tenant_id, status=wanted, limit=limit)

    def page(self, principal: Principal, query: RunQuery | None = None) -> list[Run]:
        """Runs newest first, filtered, a page at a time (see :class:`RunQuery`)."""
        authorize(principal, "runs.page")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return (query or RunQuery()).page_txn(txn, principal.tenant_id)

    def stuck(
        self,
        principal: Principal,
        *,
        workflows: WorkflowRegistry | None = None,
        thresholds: StuckThresholds | None = None,
        limit: int = 100,
    ) -> list[StuckRun]:
        """The tenant's stuck runs, longest stuck first, once per cause (see
        :mod:`tether.runs.stuck`). The checkpoint SLA applies to the ``workflows`` given."""
        authorize(principal, "runs.stuck")
        if limit < 1:
            raise InvalidInput("limit must be at least 1")
        found = self.stuck_in(principal.tenant_id, workflows=workflows, thresholds=thresholds)
        return found[:limit]

    def stuck_in(
        self,
        tenant_id: str,
        *,
        workflows: WorkflowRegistry | None = None,
        thresholds: StuckThresholds | None = None,
    ) -> list[StuckRun]:
        """:meth:`stuck` for Tether's own housekeeping (the workers' ``run.stuck``
        webhooks): no principal, so never reachable from a request."""
        slas = workflows.checkpoint_slas if workflows is not None else {}
        return find_stuck(self._storage, tenant_id, self._clock.now(), thresholds, slas)

    def events(self, principal: Principal, run_id: str) -> list[RunEvent]:
        authorize(principal, "runs.events")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            self._writer.get_txn(txn, principal.tenant_id, run_id)
            return txn.list_events(principal.tenant_id, run_id)

    def checkpoints(self, principal: Principal, run_id: str) -> list[Checkpoint]:
        authorize(principal, "runs.checkpoints")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            self._writer.get_txn(txn, principal.tenant_id, run_id)
            return txn.list_checkpoints(principal.tenant_id, run_id)

    def journal(self, principal: Principal, run_id: str) -> list[JournalEntry]:
        authorize(principal, "runs.journal")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            self._writer.get_txn(txn, principal.tenant_id, run_id)
            return txn.list_journal(principal.tenant_id, run_id)

    def state(self, principal: Principal, run_id: str) -> dict[str, Any]:
        """The run's state as of its last checkpoint."""
        authorize(principal, "runs.state")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            return load_state_dict(txn, run)[0]

    @rules(kind=one_of(JournalKind), status=one_of(WaitStatus), limit=integer(1, 10_000))
    def waits(
        self,
        principal: Principal,
        *,
        kind: JournalKind | None = None,
        status: WaitStatus | None = WaitStatus.OPEN,
        run_id: str | None = None,
        after: str | None = None,
        newest_first: bool = False,
        limit: int = 1000,
    ) -> list[Wait]:
        """Questions and approval requests by the time they were asked, oldest first (or
        ``newest_first``), a page of ``limit`` at a time: ``after`` (the last wait id of
        the previous page) continues a listing, so pages neither repeat nor skip a wait."""
        authorize(principal, "runs.waits")
        if after is not None:
            after = str(parse_id(after, what="after"))
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return txn.list_waits(
                principal.tenant_id,
                kind=JournalKind(kind).value if kind else None,
                status=WaitStatus(status).value if status else None,
                run_id=run_id,
                after_wait_id=after,
                newest_first=newest_first,
                limit=limit,
            )

    def wait(self, principal: Principal, wait_id: str) -> Wait:
        authorize(principal, "runs.wait")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return self._writer.wait_txn(txn, principal.tenant_id, wait_id)

    def handoff(self, principal: Principal, run_id: str) -> str:
        """A Markdown handoff of the run for the next session: goal, completed steps,
        current blocker, next action and context (see :mod:`tether.runs.handoff`)."""
        authorize(principal, "runs.handoff")
        return self.handoff_document(principal, run_id).to_markdown()

    def handoff_document(self, principal: Principal, run_id: str) -> HandoffDocument:
        """The handoff of :meth:`handoff`, structured."""
        authorize(principal, "runs.handoff_document")
        tenant = principal.tenant_id
        with self._storage.transaction(tenant, write=False) as txn:
            run = self._writer.get_txn(txn, tenant, run_id)
            first = txn.list_checkpoints(tenant, run_id)[:1]
            return build_handoff(
                run,
                initial_state=canonical.loads(first[0].payload) if first else {},
                state=load_state_dict(txn, run)[0],
                events=txn.list_events(tenant, run_id),
                journal=txn.list_journal(tenant, run_id),
                waits=txn.list_waits(tenant, run_id=run_id, limit=10_000),
            )

    # -- acting on runs ------------------------------------------------------------------

    def answer(self, principal: Principal, wait_id: str, answer: Any) -> Run:
        """Answer an interrupt (a clarification, an external dependency, a human review).

        Who may answer depends on the wait (see
        :func:`tether.permissions.check_wait_answer`): a clarification its addressee
        (``payload={"addressee": <principal id>}`` when the node asked, else the run's
        starter) or an operator; a ``human_review`` or an effect-outcome review an operator
        or approver who is not an agent and did not start the run.

        Raises:
            PermissionDenied: the principal may not answer this wait; nothing changed.
        """
        authorize(principal, "runs.answer")
        with self._storage.transaction(principal.tenant_id) as txn:
            wait = self._open_wait_txn(txn, principal, wait_id)
            if wait.kind is JournalKind.APPROVAL:
                raise InvalidInput(f"{wait_id} is an approval request: approve or reject it")
            if wait.reason is InterruptReason.CHILD_RUNS:
                raise InvalidInput(f"{wait_id} waits on child runs; it resumes when they finish")
            addressee = wait.request.get("addressee")
            started_by = self._writer.get_txn(txn, principal.tenant_id, wait.run_id).created_by
            check_wait_answer(
                principal,
                reason=wait.reason.value,
                started_by=started_by,
                addressee=addressee if isinstance(addressee, str) else started_by,
                settles_effect="idempotency_key" in wait.request,
            )
            if "idempotency_key" in wait.request and not _settles_effect(answer):
                raise InvalidInput(
                    f"{wait_id} asks whether effect {wait.request.get('effect')!r} happened: "
                    'answer {"result": <its result>} if it did, or {"retry": true} to run it again'
                )
            result = {"answer": answer}
            run = self._writer.resolve_txn(
                txn, principal, wait, WaitStatus.ANSWERED, result, canonical.dumps(answer)
            )
            self._audit.record_by_txn(
                txn,
                principal,
                action="run.answered",
                target=f"run:{wait.run_id}",
                details={"wait_id": wait_id, "reason": wait.reason.value},
            )
            return run

    def decide(
        self, principal: Principal, approval_id: str, *, approve: bool, comment: str | None = None
    ) -> Run:
        """Approve or reject an approval request.

        Raises:
            PermissionDenied: the principal lacks the requested role or asked for it.
            Conflict: the request was already decided, cancelled or has expired.
        """
        authorize(principal, "runs.decide")
        with self._storage.transaction(principal.tenant_id) as txn:
            wait = self._open_wait_txn(txn, principal, approval_id)
            if wait.kind is not JournalKind.APPROVAL:
                raise InvalidInput(f"{approval_id} is not an approval request; answer it instead")
            role = Role(wait.approver_role or Role.APPROVER.value)
            if not principal.has_role(role):
                raise PermissionDenied(
                    f"approval {approval_id} is decided by the {role.value} role, which "
                    f"principal {principal.principal_id!r} does not hold"
                )
            if principal.principal_id == wait.requested_by:
                raise PermissionDenied(
                    f"{principal.principal_id!r} requested approval {approval_id} and may not "
                    "decide it; another approver must"
                )
            status = WaitStatus.APPROVED if approve else WaitStatus.REJECTED
            decision = ApprovalDecision(
                approval_id=approval_id,
                status=status,
                action_digest=wait.action_digest or "",
                decided_by=principal.principal_id,
                comment=comment,
            )
            run = self._writer.resolve_txn(
                txn, principal, wait, status, {"comment": comment}, decision.model_dump_json()
            )
            self._audit.record_by_txn(
                txn,
                principal,
                action="approval.approved" if approve else "approval.rejected",
                target=f"run:{wait.run_id}",
                details={"approval_id": approval_id, "action_digest": wait.action_digest},
            )
            return run

    def settle_children(self, *, limit: int = 100) -> int:
        """Resume parents whose child runs have finished enough (all, any, or a count), in
        every tenant: their results go to the parent's journal, the children not finished
        yet are cancelled. Returns how many parents were resumed (see
        :mod:`tether.runs.children`)."""
        with self._storage.system_transaction(write=False) as txn:
            candidates = txn.find_child_waits_to_settle(limit=limit)
        settled = 0
        for tenant_id, wait_id in candidates:
            try:
                with self._storage.transaction(tenant_id) as txn:
                    settled += self._settle_txn(txn, tenant_id, wait_id)
            except Conflict:
                continue  # settled by another worker, or a child moved on: the next sweep
        return settled

    def _settle_txn(self, txn: RunStore, tenant_id: str, wait_id: str) -> bool:
        wait = txn.get_wait(tenant_id, wait_id)
        if wait is None or wait.status is not WaitStatus.OPEN:
            return False
        children = [
            child
            for child in txn.list_children(tenant_id, wait.run_id)
            if child.parent_wait_id == wait_id
        ]
        finished = sum(child.status in FINISHED for child in children)
        if finished < min(int(wait.request["need"]), len(children)):
            return False
        results = child_results_txn(txn, children)
        system = Principal(tenant_id, SYSTEM_ACTOR, frozenset({Role.ADMIN}))
        for child in children:
            if child.status not in FINISHED:
                self._writer.cancel_txn(txn, system, child, "enough siblings finished")
        self._writer.resolve_txn(
            txn, system, wait, WaitStatus.ANSWERED, {"children": finished}, canonical.dumps(results)
        )
        return True

    def set_concurrency_limit(self, principal: Principal, max_running: int | None) -> None:
        """Let at most ``max_running`` runs of the principal's tenant run at once (``None``
        lifts the limit). Runs over the limit stay queued until a running one stops."""
        authorize(principal, "runs.set_concurrency_limit")
        if max_running is not None and max_running < 1:
            raise InvalidInput("max_running must be at least 1 (or None for no limit)")
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.set_run_limit(
                principal.tenant_id,
                max_running,
                now=self._clock.now(),
                by=principal.principal_id,
            )
            self._audit.record_by_txn(
                txn,
                principal,
                action="runs.limit_set",
                target=f"tenant:{principal.tenant_id}",
                details={"max_running": max_running},
            )

    def concurrency_limit(self, principal: Principal) -> int | None:
        """The tenant's limit on running runs, if it has one."""
        authorize(principal, "runs.concurrency_limit")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return txn.get_run_limit(principal.tenant_id)

    def expire_waits(self, *, limit: int = 100) -> int:
        """Expire open interrupts and approvals past their expiry, in every tenant.

        The run is queued again: an expired approval reaches the node as a decision with
        status ``expired`` (never approved); an expired question raises
        :class:`~tether.errors.InterruptExpired` in the node. Returns how many expired.
        """
        now = self._clock.now()
        with self._storage.system_transaction(write=False) as txn:
            expired = txn.find_expired_waits(now=now, limit=limit)
        count = 0
        for tenant_id, wait_id in expired:
            system = Principal(tenant_id, SYSTEM_ACTOR, frozenset({Role.ADMIN}))
            with self._storage.transaction(tenant_id) as txn:
                wait = txn.get_wait(tenant_id, wait_id)
                if wait is None or wait.status is not WaitStatus.OPEN:
                    continue
                result: str | None = None
                if wait.kind is JournalKind.APPROVAL:
                    result = ApprovalDecision.expired(wait).model_dump_json()
                self._writer.resolve_txn(
                    txn, system, wait, WaitStatus.EXPIRED, {"expired_at": now}, result
                )
                count += 1
        return count

    def _open_wait_txn(self, txn: RunStore, principal: Principal, wait_id: str) -> Wait:
        wait = self._writer.wait_txn(txn, principal.tenant_id, wait_id)
        if wait.status is not WaitStatus.OPEN:
            raise Conflict(f"{wait_id} is already {wait.status.value}; nothing to decide")
        now = self._clock.now()
        if wait.expires_at is not None and now >= wait.expires_at:
            raise Conflict(
                f"{wait_id} expired at {wait.expires_at.isoformat()}; it can no longer be decided"
            )
        return wait


def _settles_effect(answer: Any) -> bool:
    """An answer to "did this effect happen?": ``{"result": …}`` or ``{"retry": true}``."""
    return isinstance(answer, dict) and ("result" in answer or answer.get("retry") is True)
