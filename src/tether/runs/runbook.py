"""The recovery runbook as commands: what an operator does to a run that needs a person.

Every action but the reads needs ``runs.control`` (operators and administrators) and a
reason. The reason, and any comment, go into the erasable operator notes
(:mod:`tether.audit.notes`); the run's event and the audit entry cite them by digest,
never as text. Each action is one transaction: the run row (written only if it is still
at the version read), its event, the notes and the audit entry.

- ``pause``: a running run is parked ``paused`` by its worker at its next node or effect;
  a queued or scheduled one at once.
- ``resume``: a paused or scheduled run is queued now (one paused on a timer waits for it
  again); a running run asked to pause keeps running.
- ``cancel``: any unfinished run, with its child runs (a running one at its next node or
  effect).
- ``retry``: a failed or cancelled run is queued at its node as the same visit, so its
  journal replays and no recorded effect runs again; ``to_version`` moves it to a newer
  registered version, its state through the workflow's upgrade functions.
- ``retry_node``: the current node runs as a new visit; the abandoned visit's effects run
  again under new keys, refused without ``rerun_effects`` when it journaled any.
- ``skip``: the run goes on at another node; the current one is not run.
- ``complete``: the current node is completed by hand with an ``output`` (state fields);
  the run goes on at a node, or is completed.
- ``fork``: the run is untouched; a new run starts from one of its checkpoints
  (:mod:`tether.runs.forking`).

A node-level action (``retry_node``, ``skip``, ``complete``) writes a checkpoint naming the
node, so visit counts and time travel stay exact, and cancels the run's open waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.audit.log import AuditLog
from tether.audit.notes import OperatorNotes, require_reason
from tether.clock import Clock
from tether.errors import Conflict, EffectsWouldRerun, InvalidInput
from tether.ids import IdSource, parse_id
from tether.permissions import authorize
from tether.principals import Principal
from tether.runs.children import created_event
from tether.runs.claim import load_state_dict
from tether.runs.forking import (
    ForkPlan,
    effect_lines,
    effect_names,
    fork_rows,
    history_txn,
    patched,
    plan_fork_txn,
)
from tether.runs.inspection import EffectRecord, RunInspection, inspect_txn
from tether.runs.models import (
    END,
    FINISHED,
    PAUSE_REQUEST,
    JournalKind,
    Run,
    RunStatus,
    WaitStatus,
)
from tether.runs.transitions import RunWriter, retried_on_race, visit_of
from tether.runs.workflow import Workflow, WorkflowRegistry
from tether.storage.base import Storage, Transaction
from tether.validation import guarded, integer, rules

NODE_ACTION_FROM = frozenset(
    {
        RunStatus.QUEUED,
        RunStatus.SCHEDULED,
        RunStatus.PAUSED,
        RunStatus.WAITING_FOR_USER,
        RunStatus.WAITING_FOR_APPROVAL,
        RunStatus.FAILED,
        RunStatus.CANCELLED,
    }
)
"""Statuses a node may be retried, skipped or completed by hand from: not while a worker
runs it (pause it first), not while its child runs do, not once it completed."""


class ForkResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    run: Run
    """The new run, queued."""
    plan: ForkPlan
    """What the fork runs again, with the new keys."""


@guarded
class Runbook:
    """``app.runbook``: inspect a run, and act on it with a reason."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        ids: IdSource,
        audit: AuditLog,
        notes: OperatorNotes,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._audit = audit
        self._notes = notes
        self._writer = RunWriter(clock)

    # -- reading ---------------------------------------------------------------------------

    @rules(events=integer(1, 1000))
    def inspect(self, principal: Principal, run_id: str, *, events: int = 10) -> RunInspection:
        """The run's latest checkpoint, current node, open waits, last ``events`` events
        and its effects with what the journal says happened (see
        :mod:`tether.runs.inspection`)."""
        authorize(principal, "runbook.inspect")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            return inspect_txn(txn, run, events=events)

    @rules(checkpoint=integer(0))
    def plan_fork(self, principal: Principal, run_id: str, *, checkpoint: int) -> ForkPlan:
        """What :meth:`fork` from ``checkpoint`` would do: the node it starts at and the
        effects the original journaled after it, which the fork runs again under new
        keys."""
        authorize(principal, "runbook.plan_fork")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            return plan_fork_txn(txn, run, history_txn(txn, run, checkpoint), None)

    # -- the run as a whole ----------------------------------------------------------------

    @retried_on_race
    def pause(
        self, principal: Principal, run_id: str, *, reason: str, comment: str | None = None
    ) -> Run:
        """Stop a run from going on until :meth:`resume`. A running run is asked to stop:
        its worker parks it at its next node or effect (``run.paused``, with the reason)."""
        authorize(principal, "runbook.pause")
        text = require_reason(reason, "pausing a run")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            notes = self._notes_txn(txn, principal, text, comment)
            if run.status is RunStatus.RUNNING:
                if run.cancel_requested:
                    asked = (
                        "pause" if (run.cancel_reason or "").startswith(PAUSE_REQUEST) else "cancel"
                    )
                    raise Conflict(f"run {run_id} has already been asked to {asked}")
                txn.request_cancel(run.tenant_id, run_id, reason=PAUSE_REQUEST + notes["reason"])
                updated = run.model_copy(
                    update={
                        "cancel_requested": True,
                        "cancel_reason": PAUSE_REQUEST + notes["reason"],
                    }
                )
            elif run.status in (RunStatus.QUEUED, RunStatus.SCHEDULED):
                wait = txn.get_wait(run.tenant_id, run.wait_id) if run.wait_id else None
                timer = wait is not None and wait.status is WaitStatus.OPEN
                updated = self._writer.transition_txn(
                    txn,
                    principal,
                    run,
                    RunStatus.PAUSED,
                    "run.paused",
                    notes,
                    wait_id=run.wait_id if timer else None,
                )
            else:
                raise Conflict(
                    f"run {run_id} is {run.status.value}: only a running, queued or scheduled "
                    "run is paused (a waiting run moves only when its wait is answered; cancel "
                    "it to stop it for good)"
                )
            self._audit_txn(txn, principal, "run.paused", run_id, notes)
            return updated

    @retried_on_race
    def resume(
        self, principal: Principal, run_id: str, *, reason: str, comment: str | None = None
    ) -> Run:
        """Let a paused run go on: queued now (a run paused on a timer goes back to
        waiting for it). A scheduled run is queued now, its timer or backoff cut short; a
        running run asked to pause is left running. A run waiting on an open question
        resumes by answering it."""
        authorize(principal, "runbook.resume")
        text = require_reason(reason, "resuming a run")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            notes = self._notes_txn(txn, principal, text, comment)
            if run.status is RunStatus.RUNNING and run.cancel_requested:
                if not (run.cancel_reason or "").startswith(PAUSE_REQUEST):
                    raise Conflict(f"run {run_id} is being cancelled; retry it once it is")
                self._writer.control_txn(txn, run, run.version)
                updated = run.model_copy(update={"cancel_requested": False, "cancel_reason": None})
            else:
                updated = self._resume_txn(txn, principal, run, notes)
            self._audit_txn(txn, principal, "run.resumed", run_id, notes)
            return updated

    def _resume_txn(
        self, txn: Transaction, principal: Principal, run: Run, notes: dict[str, str]
    ) -> Run:
        run_id = run.run_id
        if run.status in FINISHED:
            raise Conflict(
                f"run {run_id} is {run.status.value}; a finished run cannot resume (retry a "
                "failed or cancelled one: tether runs retry)"
            )
        if run.status not in (RunStatus.PAUSED, RunStatus.SCHEDULED):
            raise Conflict(
                f"run {run_id} is {run.status.value}; only paused or scheduled runs resume"
            )
        wait = txn.get_wait(run.tenant_id, run.wait_id) if run.wait_id else None
        if wait is not None and wait.status is WaitStatus.OPEN and wait.resume_at is None:
            raise Conflict(
                f"run {run_id} waits on {wait.reason.value} {wait.wait_id}; answer it "
                "(or decide the approval) to resume"
            )
        now = self._clock.now()
        if wait is not None and wait.status is WaitStatus.OPEN:
            if run.status is RunStatus.PAUSED and wait.resume_at and wait.resume_at > now:
                updated = self._writer.transition_txn(
                    txn,
                    principal,
                    run,
                    RunStatus.SCHEDULED,
                    "run.resumed",
                    notes,
                    wait_id=wait.wait_id,
                    resume_at=wait.resume_at,
                )
            else:
                resolution = {"resumed_early": True, **notes}
                updated = self._writer.resolve_txn(
                    txn, principal, wait, WaitStatus.ANSWERED, resolution, "null", resolution
                )
        else:
            updated = self._writer.transition_txn(
                txn, principal, run, RunStatus.QUEUED, "run.resumed", notes
            )
        if run.cancel_requested:
            self._writer.control_txn(txn, updated, updated.version)
        return updated

    @retried_on_race
    def cancel(
        self, principal: Principal, run_id: str, *, reason: str, comment: str | None = None
    ) -> Run:
        """Cancel a run, and its unfinished child runs. A waiting run is cancelled at once
        (its open waits too); a running one at its next node or effect. Completed effects
        are not undone. The ``run.cancelled`` event keeps the reason's digest."""
        authorize(principal, "runbook.cancel")
        text = require_reason(reason, "cancelling a run")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            if run.status in FINISHED:
                raise Conflict(f"run {run_id} is already {run.status.value}")
            notes = self._notes_txn(txn, principal, text, comment)
            updated = self._writer.cancel_txn(txn, principal, run, notes["reason"])
            self._audit_txn(txn, principal, "run.cancelled", run_id, notes)
            return updated

    @retried_on_race
    @rules(to_version=integer(1, optional=True))
    def retry(
        self,
        principal: Principal,
        run_id: str,
        *,
        reason: str,
        comment: str | None = None,
        to_version: int | None = None,
        workflows: WorkflowRegistry | None = None,
    ) -> Run:
        """Queue a failed or cancelled run again from its last checkpoint.

        Its current node runs again as the same visit: everything the journal recorded is
        replayed, so no recorded effect runs twice (an effect whose outcome is unknown is
        settled as after a crash). With ``to_version`` the run moves to that newer version
        of its workflow (registered in ``workflows``): the node must exist there and the
        stored state must pass its upgrade functions (``Workflow.upgrades``); the code
        must make the same journaled calls in the same order up to where it changed.

        Raises:
            Conflict: the run is neither failed nor cancelled.
            InvalidInput: ``to_version`` is not newer, lacks the node, or the state does
                not upgrade; nothing changed.
        """
        authorize(principal, "runbook.retry")
        text = require_reason(reason, "retrying a run")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            if run.status not in (RunStatus.FAILED, RunStatus.CANCELLED):
                raise Conflict(
                    f"run {run_id} is {run.status.value}: only a failed or cancelled run is "
                    "retried (resume a paused one; retry-node runs a node afresh)"
                )
            version = run.workflow_version
            data: dict[str, Any] = {"node": run.current_node, "visit": visit_of(run)}
            if to_version is not None:
                workflow = self._upgrade_target(txn, run, to_version, workflows)
                version = workflow.version
                data.update(from_version=run.workflow_version, to_version=version)
            notes = self._notes_txn(txn, principal, text, comment)
            updated = self._writer.transition_txn(
                txn,
                principal,
                run,
                RunStatus.QUEUED,
                "run.retried",
                {**data, **notes},
                attempt=0,
                error=None,
                storage_faults=0,
                workflow_version=version,
            )
            self._writer.control_txn(txn, updated, updated.version)
            self._audit_txn(txn, principal, "run.retried", run_id, {**data, **notes})
            return updated

    def _upgrade_target(
        self,
        txn: Transaction,
        run: Run,
        to_version: int,
        workflows: WorkflowRegistry | None,
    ) -> Workflow[Any]:
        if workflows is None:
            raise InvalidInput("retrying on another version needs the workflows (--workflows)")
        if to_version <= run.workflow_version:
            raise InvalidInput(
                f"run {run.run_id} is on {run.workflow}@{run.workflow_version}: --to-version "
                "must name a newer version"
            )
        workflow = workflows.get(run.workflow, to_version)
        workflow.run_node(run.current_node)
        state, state_version = load_state_dict(txn, run)
        workflow.load_state(state, state_version)
        return workflow

    # -- the current node ------------------------------------------------------------------

    @retried_on_race
    def retry_node(
        self,
        principal: Principal,
        run_id: str,
        *,
        reason: str,
        comment: str | None = None,
        rerun_effects: bool = False,
    ) -> Run:
        """Run the current node again as a new visit: nothing of the abandoned visit is
        replayed (an expired approval is asked again, a step decides afresh), and its
        effects run again under new keys, so this is refused unless ``rerun_effects``
        when the abandoned visit journaled any. Its open waits are cancelled."""
        authorize(principal, "runbook.retry_node")
        text = require_reason(reason, "retrying a node")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._node_action_run_txn(txn, principal, run_id)
            effects = self._visit_effects_txn(txn, run)
            if effects and not rerun_effects:
                raise EffectsWouldRerun(
                    f"node {run.current_node!r} of run {run_id} already journaled "
                    f"{len(effects)} effect(s) in this visit: {effects}. A new visit runs "
                    "them again under new keys; pass rerun_effects (--rerun-effects) if the "
                    "services may do them twice, or retry the run to replay them",
                    effects,
                )
            notes = self._notes_txn(txn, principal, text, comment)
            data = {"node": run.current_node, "visit": visit_of(run), "rerun": effects, **notes}
            state, state_version = load_state_dict(txn, run)
            updated = self._writer.checkpoint_txn(
                txn, principal, run, run.current_node, state, state_version, "node.retried", data
            )
            self._audit_txn(txn, principal, "run.node_retried", run_id, data)
            return updated

    @retried_on_race
    def skip(
        self,
        principal: Principal,
        run_id: str,
        *,
        next_node: str,
        reason: str,
        workflows: WorkflowRegistry,
        comment: str | None = None,
    ) -> Run:
        """Move on to ``next_node`` without running the current node; the state stays as
        the last checkpoint left it. Effects the node already journaled stay applied (or
        unknown); none of them is undone."""
        authorize(principal, "runbook.skip")
        text = require_reason(reason, "skipping a node")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._node_action_run_txn(txn, principal, run_id)
            workflow = workflows.get(run.workflow, run.workflow_version)
            if next_node == END:
                raise InvalidInput("to end the run, complete it (tether runs complete)")
            workflow.run_node(next_node)
            notes = self._notes_txn(txn, principal, text, comment)
            data = {
                "node": run.current_node,
                "visit": visit_of(run),
                "next": next_node,
                "effects": self._visit_effects_txn(txn, run),
                **notes,
            }
            state, state_version = load_state_dict(txn, run)
            updated = self._writer.checkpoint_txn(
                txn, principal, run, next_node, state, state_version, "node.skipped", data
            )
            self._audit_txn(txn, principal, "run.node_skipped", run_id, data)
            return updated

    @retried_on_race
    def complete(
        self,
        principal: Principal,
        run_id: str,
        *,
        output: Mapping[str, Any],
        reason: str,
        workflows: WorkflowRegistry,
        next_node: str | None = None,
        comment: str | None = None,
    ) -> Run:
        """Complete the current node by hand: ``output`` (state fields, each replacing the
        field of that name) is checked against the workflow's state model and checkpointed;
        the run goes on at ``next_node``, or, without one, is completed."""
        authorize(principal, "runbook.complete")
        text = require_reason(reason, "completing by hand")
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._node_action_run_txn(txn, principal, run_id)
            workflow = workflows.get(run.workflow, run.workflow_version)
            target = next_node or END
            if target != END:
                workflow.run_node(target)
            stored, stored_version = load_state_dict(txn, run)
            state = workflow.load_state(patched(stored, output), stored_version)
            notes = self._notes_txn(txn, principal, text, comment)
            data = {
                "node": run.current_node,
                "visit": visit_of(run),
                "next": target,
                "by_hand": True,
                "output": "sha256:" + canonical.digest(dict(output)),
                "fields": sorted(output),
                **notes,
            }
            event = "run.completed" if target == END else "node.completed"
            updated = self._writer.checkpoint_txn(
                txn,
                principal,
                run,
                target,
                state.model_dump(mode="json"),
                workflow.state_version,
                event,
                data,
            )
            self._audit_txn(txn, principal, "run.completed_by_hand", run_id, data)
            return updated

    # -- time travel -----------------------------------------------------------------------

    @retried_on_race
    @rules(checkpoint=integer(0))
    def fork(
        self,
        principal: Principal,
        run_id: str,
        *,
        checkpoint: int,
        reason: str,
        workflows: WorkflowRegistry,
        patch: Mapping[str, Any] | None = None,
        rerun_effects: bool = False,
        new_run_id: str | None = None,
        comment: str | None = None,
    ) -> ForkResult:
        """Start a new run from checkpoint ``checkpoint`` of this one, with ``patch``
        (state fields) on top, on the same workflow version and for the same starter.
        The original is only read. Effects the original journaled after the checkpoint
        run again in the fork under new keys, so this is refused unless
        ``rerun_effects`` when there are any (see :meth:`plan_fork`)."""
        authorize(principal, "runbook.fork")
        text = require_reason(reason, "forking a run")
        fork_id = str(parse_id(new_run_id, what="run id")) if new_run_id else None
        fork_id = fork_id or str(self._ids.new_id())
        with self._storage.transaction(principal.tenant_id) as txn:
            run = self._writer.get_txn(txn, principal.tenant_id, run_id)
            workflow = workflows.get(run.workflow, run.workflow_version)
            history = history_txn(txn, run, checkpoint)
            plan = plan_fork_txn(txn, run, history, fork_id)
            if plan.rerun and not rerun_effects:
                raise EffectsWouldRerun(
                    f"a fork of run {run_id} from checkpoint {checkpoint} runs again "
                    f"{len(plan.rerun)} effect(s) the original journaled after it, under new "
                    f"keys: {effect_names(plan.rerun)}. Pass rerun_effects (--rerun-effects) "
                    "if the services may do them twice",
                    effect_lines(plan.rerun),
                )
            workflow.run_node(plan.node)
            state = None
            if patch is not None:
                model = workflow.load_state(patched(history.state, patch), history.state_version)
                state = model.model_dump(mode="json")
            if txn.get_run(principal.tenant_id, fork_id) is not None:
                raise Conflict(f"run {fork_id} already exists")
            fork, checkpoints = fork_rows(
                run,
                history,
                new_run_id=fork_id,
                state=state,
                state_version=workflow.state_version,
                created_by=run.created_by,
                now=self._clock.now(),
            )
            notes = self._notes_txn(txn, principal, text, comment)
            data: dict[str, Any] = {
                "forked_from": run_id,
                "checkpoint": checkpoint,
                "rerun": len(plan.rerun),
                **({"patched": sorted(patch)} if patch is not None else {}),
                **notes,
            }
            txn.insert_run(fork)
            for row in checkpoints:
                txn.insert_checkpoint(row)
            txn.insert_events(
                [created_event(fork, workflow, {**data, "by": principal.principal_id})]
            )
            self._audit_txn(txn, principal, "run.forked", run_id, {"fork": fork_id, **data})
            return ForkResult(run=fork, plan=plan)

    # -- helpers ---------------------------------------------------------------------------

    def _notes_txn(
        self, txn: Transaction, principal: Principal, reason: str, comment: str | None
    ) -> dict[str, str]:
        """The reason (and comment) stored as notes; their digests, to cite."""
        notes = {"reason": self._notes.record_txn(txn, principal, reason)}
        if comment is not None and comment.strip():
            notes["comment"] = self._notes.record_txn(
                txn, principal, require_reason(comment, "a comment")
            )
        return notes

    def _audit_txn(
        self,
        txn: Transaction,
        principal: Principal,
        action: str,
        run_id: str,
        details: Mapping[str, Any],
    ) -> None:
        self._audit.record_by_txn(
            txn, principal, action=action, target=f"run:{run_id}", details=details
        )

    def _node_action_run_txn(self, txn: Transaction, principal: Principal, run_id: str) -> Run:
        run = self._writer.get_txn(txn, principal.tenant_id, run_id)
        if run.status in NODE_ACTION_FROM:
            return run
        if run.status is RunStatus.RUNNING:
            hint = "a worker is running it: pause it first (tether runs pause)"
        elif run.status is RunStatus.WAITING_FOR_CHILDREN:
            hint = "its child runs are running: cancel them, or wait for them"
        else:
            hint = "it completed: fork it from a checkpoint to redo part of it"
        raise Conflict(f"run {run_id} is {run.status.value}; {hint}")

    def _visit_effects_txn(self, txn: Transaction, run: Run) -> list[str]:
        """``name (key): outcome`` of each effect the current visit journaled."""
        visit = visit_of(run)
        return [
            f"{e.name} ({e.idempotency_key}): {EffectRecord.of(e).label}"
            for e in txn.list_journal_visit(run.tenant_id, run.run_id, run.current_node, visit)
            if e.kind is JournalKind.EFFECT
        ]
