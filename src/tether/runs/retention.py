"""Run retention: policies per workflow, legal holds on runs, and ``gc``.

After a workflow's retention period a finished run keeps its run row, its final
checkpoint (rewritten as a full snapshot), its effect journal without payloads (keys and
outcomes) and its audit entries; its events, intermediate checkpoints, step, interrupt and
approval journal entries, journal payloads and inbox messages are deleted. A LangGraph
thread's run (:mod:`tether.runs.graph_runs`) also keeps only the latest checkpoint of each
namespace, its pending writes and the channel values it reads. A run under a legal hold is
never compacted. ``gc`` works in small batches, one short transaction each,
so it never holds the write lock for long.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tether import canonical
from tether.audit.log import AuditLog
from tether.audit.notes import OperatorNotes, require_reason
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, NotFound
from tether.ids import IdSource, parse_id
from tether.permissions import authorize
from tether.principals import Principal
from tether.runs.claim import load_state_dict
from tether.runs.graph_runs import GRAPH_WORKFLOW
from tether.runs.graphs import prune_thread_txn
from tether.runs.models import Run, RunEvent
from tether.storage.base import Storage
from tether.storage.rows import RetentionCandidate, RunHoldRow
from tether.storage.stores import RunStore
from tether.validation import guarded

ALL_WORKFLOWS = "*"
"""The policy of every workflow that has none of its own."""

MAX_KEEP_DAYS = 36_500

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called after each batch."""


class GcReport(BaseModel):
    """What a ``gc`` pass removed (or, in a dry run, would remove)."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    dry_run: bool
    examined: int = Field(description="finished runs old enough for some policy")
    compacted: int = Field(description="runs compacted (or that would be)")
    held: int = Field(description="runs skipped because of a legal hold")
    deleted: dict[str, int] = Field(description="rows deleted per table")
    payloads_cleared: int = Field(description="effect journal entries whose payload went")


class RunHold(BaseModel):
    model_config = ConfigDict(frozen=True)

    hold_id: str
    run_id: str
    note_digest: str
    created_by: str


@guarded
class RunRetention:
    """``app.retention``: retention policies, legal holds on runs, ``gc``."""

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

    # -- policies --------------------------------------------------------------------------

    def set_policy(self, principal: Principal, workflow: str, keep_days: int) -> None:
        """Compact finished runs of ``workflow`` (``*``: every workflow without a policy of
        its own) ``keep_days`` after they finished."""
        authorize(principal, "retention.set_policy")
        if not workflow.strip():
            raise InvalidInput("name a workflow, or * for every workflow without a policy")
        if not 0 <= keep_days <= MAX_KEEP_DAYS:
            raise InvalidInput(f"keep_days must be between 0 and {MAX_KEEP_DAYS}")
        with self._storage.transaction(principal.tenant_id) as txn:
            txn.upsert_retention_policy(
                principal.tenant_id,
                workflow,
                keep_days,
                at=self._clock.now(),
                by=principal.principal_id,
            )
            self._audit.record_by_txn(
                txn,
                principal,
                action="retention.policy_set",
                target=f"workflow:{workflow}",
                details={"keep_days": keep_days},
            )

    def remove_policy(self, principal: Principal, workflow: str) -> None:
        authorize(principal, "retention.remove_policy")
        with self._storage.transaction(principal.tenant_id) as txn:
            if not txn.delete_retention_policy(principal.tenant_id, workflow):
                raise NotFound(f"workflow {workflow!r} has no retention policy")
            self._audit.record_by_txn(
                txn, principal, action="retention.policy_removed", target=f"workflow:{workflow}"
            )

    def policies(self, principal: Principal) -> dict[str, int]:
        """Days kept per workflow (``*``: the default); runs of others are kept forever."""
        authorize(principal, "retention.policies")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            return txn.list_retention_policies(principal.tenant_id)

    # -- legal holds -----------------------------------------------------------------------

    def hold(self, principal: Principal, run_id: str, *, reason: str) -> str:
        """Place a legal hold: the run is never compacted until every hold is released."""
        authorize(principal, "retention.hold")
        text = require_reason(reason, "a legal hold")
        parse_id(run_id, what="run id")
        hold_id = str(self._ids.new_id())
        with self._storage.transaction(principal.tenant_id) as txn:
            run = txn.get_run(principal.tenant_id, run_id)
            if run is None:
                raise NotFound(f"run {run_id} does not exist in tenant {principal.tenant_id!r}")
            digest = self._notes.record_txn(txn, principal, text)
            self._event_txn(txn, principal, run, "run.held", {"hold_id": hold_id, "reason": digest})
            txn.insert_run_hold(
                principal.tenant_id,
                RunHoldRow(
                    hold_id=hold_id,
                    run_id=run_id,
                    note_digest=digest,
                    created_at=self._clock.now(),
                    created_by=principal.principal_id,
                ),
            )
            self._audit.record_by_txn(
                txn,
                principal,
                action="run.held",
                target=f"run:{run_id}",
                details={"hold_id": hold_id, "reason": digest},
            )
        return hold_id

    def release(self, principal: Principal, run_id: str, *, reason: str) -> int:
        """Release every hold on the run; how many there were."""
        authorize(principal, "retention.release")
        text = require_reason(reason, "releasing a legal hold")
        parse_id(run_id, what="run id")
        with self._storage.transaction(principal.tenant_id) as txn:
            released = txn.release_run_holds(
                principal.tenant_id, run_id, at=self._clock.now(), by=principal.principal_id
            )
            run = txn.get_run(principal.tenant_id, run_id)
            if not released and run is None:
                raise NotFound(f"run {run_id} does not exist in tenant {principal.tenant_id!r}")
            if not released:
                raise Conflict(f"run {run_id} has no legal hold to release")
            digest = self._notes.record_txn(txn, principal, text)
            if run is not None:
                self._event_txn(
                    txn, principal, run, "run.hold_released", {"holds": released, "reason": digest}
                )
            self._audit.record_by_txn(
                txn,
                principal,
                action="run.hold_released",
                target=f"run:{run_id}",
                details={"holds": released, "reason": digest},
            )
        return released

    def holds(self, principal: Principal, *, limit: int = 1000) -> list[RunHold]:
        authorize(principal, "retention.holds")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            rows = txn.list_run_holds(principal.tenant_id, limit=limit)
        return [
            RunHold(
                hold_id=r.hold_id,
                run_id=r.run_id,
                note_digest=r.note_digest,
                created_by=r.created_by,
            )
            for r in rows
        ]

    def _event_txn(
        self, txn: RunStore, principal: Principal, run: Run, type_: str, data: dict[str, Any]
    ) -> None:
        """Add a run event, unless a worker holds the run: its next write numbers the
        events it adds from its own copy of the run, so one added under it would collide
        (the audit entry records the action either way). The run's ``updated_at`` stays:
        retention and webhooks read it as the time the run finished."""
        if run.lease_owner is not None and not run.status.finished:
            return
        updated = run.model_copy(update={"event_seq": run.event_seq + 1})
        if txn.save_run(updated, expected_version=run.version, expected_owner=run.lease_owner):
            txn.insert_events(
                [
                    RunEvent(
                        tenant_id=run.tenant_id,
                        run_id=run.run_id,
                        seq=updated.event_seq,
                        at=self._clock.now(),
                        type=type_,
                        node=run.current_node,
                        duration_ms=None,
                        data={**data, "by": principal.principal_id},
                    )
                ]
            )

    # -- gc --------------------------------------------------------------------------------

    def gc(
        self,
        principal: Principal,
        *,
        dry_run: bool = False,
        batch: int = 50,
        progress: Progress | None = None,
    ) -> GcReport:
        """Compact every finished run of the tenant past its workflow's retention period.

        Each batch of ``batch`` runs is one transaction with one audit entry
        (``run.retained``, naming the runs and the counts). A dry run writes nothing and
        reports what a real one would remove now.
        """
        authorize(principal, "retention.gc")
        if not 1 <= batch <= 1000:
            raise InvalidInput("batch must be between 1 and 1000")
        tenant = principal.tenant_id
        due, examined, held = self._due_runs(tenant)
        deleted = dict.fromkeys(("run_events", "run_checkpoints", "run_journal", "run_inbox"), 0)
        cleared = compacted = 0
        for start in range(0, len(due), batch):
            chunk = due[start : start + batch]
            with self._storage.transaction(tenant, write=not dry_run) as txn:
                done: list[str] = []
                counts = dict.fromkeys(deleted, 0)
                for run_id in chunk:
                    run = txn.get_run(tenant, run_id)
                    if run is None or not run.status.finished:
                        continue
                    rows = txn.count_run_rows(tenant, run_id)
                    if not dry_run:
                        state, _ = load_state_dict(txn, run)
                        if not txn.compact_run(
                            tenant,
                            run_id,
                            final_seq=run.checkpoint_seq,
                            final_state_json=canonical.dumps(state),
                            at=self._clock.now(),
                        ):
                            continue
                        if run.workflow == GRAPH_WORKFLOW:
                            thread_id = txn.graph_thread_of_run(tenant, run_id)
                            if thread_id is not None:
                                prune_thread_txn(txn, tenant, thread_id)
                    done.append(run_id)
                    counts["run_events"] += rows.events
                    counts["run_checkpoints"] += rows.checkpoints - 1
                    counts["run_journal"] += rows.journal - rows.effects
                    counts["run_inbox"] += rows.inbox
                    cleared += rows.effects
                if done and not dry_run:
                    self._audit.record_by_txn(
                        txn,
                        principal,
                        action="run.retained",
                        target=f"tenant:{tenant}",
                        details={"runs": done, "deleted": counts},
                    )
            compacted += len(done)
            for table, count in counts.items():
                deleted[table] += count
            if progress is not None:
                progress(min(start + batch, len(due)), len(due))
        return GcReport(
            tenant_id=tenant,
            dry_run=dry_run,
            examined=examined,
            compacted=compacted,
            held=held,
            deleted=deleted,
            payloads_cleared=cleared,
        )

    def _due_runs(self, tenant: str) -> tuple[list[str], int, int]:
        """The runs to compact now, how many finished runs were old enough for some
        policy, and how many of those are held."""
        now = self._clock.now()
        with self._storage.transaction(tenant, write=False) as txn:
            policies = txn.list_retention_policies(tenant)
        if not policies:
            return [], 0, 0
        bound = now - timedelta(days=min(policies.values()))
        due: list[str] = []
        examined = held = 0
        after = ""
        while True:
            with self._storage.transaction(tenant, write=False) as txn:
                page = txn.list_retention_candidates(
                    tenant, finished_before=bound, after_run_id=after, limit=500
                )
            for candidate in page:
                if not _past_retention(candidate, policies, now):
                    continue
                examined += 1
                if candidate.held:
                    held += 1
                else:
                    due.append(candidate.run_id)
            if len(page) < 500:
                return due, examined, held
            after = page[-1].run_id


def _past_retention(candidate: RetentionCandidate, policies: dict[str, int], now: datetime) -> bool:
    days = policies.get(candidate.workflow, policies.get(ALL_WORKFLOWS))
    return days is not None and candidate.finished_at < now - timedelta(days=days)
