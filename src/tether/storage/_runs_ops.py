"""Typed storage operations of the run engine, written once over named queries."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tether import canonical
from tether.errors import LeaseLost, RunCancelled
from tether.runs.models import Checkpoint, JournalEntry, Run, RunEvent, RunStatus, Wait
from tether.storage._transaction import QueryTransaction, Row
from tether.storage.rows import (
    RunFigures,
    RunnableRun,
    RunningCounts,
    StepWrite,
    StuckCutoffs,
    StuckRow,
)

TAKEOVER_MARK = '%"taken_over":true%'
"""How the data of a ``run.claimed`` event that took the run over from another worker
reads (canonical JSON), as a ``LIKE`` pattern."""


class RunOps(QueryTransaction):
    @abstractmethod
    def _array_in(self, values: Sequence[str]) -> Any: ...

    @abstractmethod
    def _fetch_many(self, name: str, params: Sequence[Mapping[str, Any]]) -> None: ...

    def _opt_ts_in(self, moment: datetime | None) -> Any:
        return None if moment is None else self._ts_in(moment)

    def _opt_ts_out(self, value: Any) -> datetime | None:
        return None if value is None else self._ts_out(value)

    def _run(self, row: Row) -> Run:
        return Run(
            **{
                **row,
                "lease_expires_at": self._opt_ts_out(row["lease_expires_at"]),
                "deadline": self._opt_ts_out(row["deadline"]),
                "resume_at": self._opt_ts_out(row["resume_at"]),
                "created_at": self._ts_out(row["created_at"]),
                "updated_at": self._ts_out(row["updated_at"]),
                "cancel_requested": bool(row["cancel_requested"]),
                "child_serial": bool(row["child_serial"]),
                "visits": canonical.loads(row["visits"]),
            }
        )

    def _run_params(self, run: Run) -> dict[str, Any]:
        params = dict(run.__dict__)
        params.update(
            lease_expires_at=self._opt_ts_in(run.lease_expires_at),
            deadline=self._opt_ts_in(run.deadline),
            resume_at=self._opt_ts_in(run.resume_at),
            created_at=self._ts_in(run.created_at),
            updated_at=self._ts_in(run.updated_at),
            visits=canonical.dumps(run.visits, trusted=True),
            status=run.status.value,
        )
        return params

    def _save_params(self, run: Run) -> dict[str, Any]:
        """The parameters of ``save_run``: the run's key and the columns a write may
        change (a step binds and checks these, not the whole row)."""
        lease_expires_at, resume_at = run.lease_expires_at, run.resume_at
        return {
            "tenant_id": run.tenant_id,
            "run_id": run.run_id,
            "status": run.status.value,
            "current_node": run.current_node,
            "state_version": run.state_version,
            "checkpoint_seq": run.checkpoint_seq,
            "full_seq": run.full_seq,
            "delta_bytes": run.delta_bytes,
            "full_bytes": run.full_bytes,
            "event_seq": run.event_seq,
            "lease_owner": run.lease_owner,
            "lease_expires_at": None if lease_expires_at is None else self._ts_in(lease_expires_at),
            "attempt": run.attempt,
            "steps": run.steps,
            "resume_at": None if resume_at is None else self._ts_in(resume_at),
            "wait_id": run.wait_id,
            "error": run.error,
            "visits": canonical.dumps(run.visits, trusted=True),
            "storage_faults": run.storage_faults,
            "updated_at": self._ts_in(run.updated_at),
            "updated_by": run.updated_by,
        }

    def insert_run(self, run: Run) -> None:
        self._fetch("insert_run", self._run_params(run))

    def get_run(self, tenant_id: str, run_id: str) -> Run | None:
        row = self._one("get_run", tenant_id=tenant_id, run_id=run_id)
        return self._run(row) if row else None

    def list_runs(self, tenant_id: str, *, status: str | None, limit: int) -> list[Run]:
        rows = self._fetch("list_runs", {"tenant_id": tenant_id, "status": status, "limit": limit})
        return [self._run(row) for row in rows]

    def list_runs_page(
        self,
        tenant_id: str,
        *,
        status: str | None,
        workflow: str | None,
        created_after: datetime | None,
        created_before: datetime | None,
        before_run_id: str | None,
        limit: int,
    ) -> list[Run]:
        params = {
            "tenant_id": tenant_id,
            "status": status,
            "workflow": workflow,
            "created_after": self._ts_in(created_after) if created_after else None,
            "created_before": self._ts_in(created_before) if created_before else None,
            "before_run_id": before_run_id,
            "limit": limit,
        }
        return [self._run(row) for row in self._fetch("list_runs_page", params)]

    def save_run(
        self, run: Run, *, expected_version: int, expected_owner: str | None
    ) -> tuple[int, bool] | None:
        """Write ``run`` if it is still at ``expected_version`` and leased to ``expected_owner``.

        Returns the new version and whether cancellation was requested, or ``None`` when
        another writer got there first (the caller must then stop without further effects).
        """
        params = self._save_params(run)
        params.update(expected_version=expected_version, expected_owner=expected_owner)
        # A step (a running run left running) first tries the update that moves no index
        # entry; if it matches no row, the whole update decides.
        row = None
        if run.status is RunStatus.RUNNING and run.resume_at is None:
            row = self._one("save_running_run", **params)
        if row is None:
            row = self._one("save_run", **params)
        if row is None:
            return None
        return int(row["version"]), bool(row["cancel_requested"])

    def request_cancel(self, tenant_id: str, run_id: str, *, reason: str) -> bool:
        row = self._one("request_cancel", tenant_id=tenant_id, run_id=run_id, reason=reason)
        return row is not None

    def set_run_control(
        self,
        tenant_id: str,
        run_id: str,
        *,
        workflow_version: int,
        cancel_requested: bool,
        cancel_reason: str | None,
        expected_version: int,
    ) -> bool:
        row = self._one(
            "set_run_control",
            tenant_id=tenant_id,
            run_id=run_id,
            workflow_version=workflow_version,
            cancel_requested=cancel_requested,
            cancel_reason=cancel_reason,
            expected_version=expected_version,
        )
        return row is not None

    def claim_run(
        self,
        tenant_id: str,
        run_id: str,
        *,
        owner: str,
        lease_expires_at: datetime,
        now: datetime,
        workflow_keys: Sequence[str],
    ) -> Run | None:
        row = self._one(
            "claim_run",
            tenant_id=tenant_id,
            run_id=run_id,
            owner=owner,
            lease_expires_at=self._ts_in(lease_expires_at),
            now=self._ts_in(now),
            workflow_keys=self._array_in(workflow_keys),
        )
        return self._run(row) if row else None

    def renew_lease(
        self, tenant_id: str, run_id: str, *, owner: str, epoch: int, lease_expires_at: datetime
    ) -> bool:
        """Extend the lease if ``owner`` still holds it at ``epoch``; whether it did."""
        row = self._one(
            "renew_lease",
            tenant_id=tenant_id,
            run_id=run_id,
            owner=owner,
            epoch=epoch,
            lease_expires_at=self._ts_in(lease_expires_at),
        )
        return row is not None

    def release_after_fault(
        self,
        tenant_id: str,
        run_id: str,
        *,
        owner: str,
        epoch: int,
        error: str,
        resume_at: datetime,
        now: datetime,
    ) -> Run | None:
        """Hand a run back after a storage fault (runnable at ``resume_at``, one more
        fault counted) if ``owner`` still holds it at ``epoch``; the run as written."""
        row = self._one(
            "release_after_fault",
            tenant_id=tenant_id,
            run_id=run_id,
            owner=owner,
            epoch=epoch,
            error=error,
            resume_at=self._ts_in(resume_at),
            now=self._ts_in(now),
        )
        return self._run(row) if row else None

    def mark_calls_ended(self, entries: Sequence[JournalEntry], *, at: datetime) -> None:
        params = [
            {
                "tenant_id": e.tenant_id,
                "run_id": e.run_id,
                "node": e.node,
                "visit": e.visit,
                "position": e.position,
                "finished_at": self._ts_in(at),
            }
            for e in entries
        ]
        if params:
            self._fetch_many("mark_call_ended", params)

    def find_runnable(
        self,
        *,
        now: datetime,
        workflow_keys: Sequence[str],
        limit: int,
        workflow_limits: Mapping[str, int] | None = None,
    ) -> list[RunnableRun]:
        rows = self._fetch(
            "find_runnable",
            {
                "now": self._ts_in(now),
                "workflow_keys": self._array_in(workflow_keys),
                "workflow_limits": canonical.dumps(dict(workflow_limits or {})),
                "limit": limit,
            },
        )
        return [
            RunnableRun(
                row["tenant_id"],
                row["run_id"],
                row["workflow"],
                bool(row["tenant_limited"]),
                row["parent_run_id"],
                bool(row["child_serial"]),
            )
            for row in rows
        ]

    def lock_run_limits(self, tenant_id: str, workflow: str) -> None:
        """Hold the concurrency-limit lock of the tenant and the workflow until commit."""
        self._fetch("lock_run_limits", {"tenant_id": tenant_id, "workflow": workflow})

    def running_counts(
        self, tenant_id: str, run_id: str, workflow: str, *, now: datetime
    ) -> RunningCounts:
        row = self._one(
            "running_counts",
            tenant_id=tenant_id,
            run_id=run_id,
            workflow=workflow,
            now=self._ts_in(now),
        )
        if row is None:
            return RunningCounts(0, None, 0)
        limit = row["tenant_limit"]
        return RunningCounts(
            int(row["tenant_running"]),
            None if limit is None else int(limit),
            int(row["workflow_running"]),
        )

    def lock_children(self, tenant_id: str, parent_run_id: str) -> None:
        """Hold the lock of a parent's children until the transaction ends."""
        self._fetch("lock_children", {"tenant_id": tenant_id, "parent_run_id": parent_run_id})

    def running_siblings(
        self, tenant_id: str, parent_run_id: str, run_id: str, *, now: datetime
    ) -> int:
        row = self._one(
            "running_siblings",
            tenant_id=tenant_id,
            parent_run_id=parent_run_id,
            run_id=run_id,
            now=self._ts_in(now),
        )
        return 0 if row is None else int(row["running"])

    def list_children(self, tenant_id: str, parent_run_id: str) -> list[Run]:
        rows = self._fetch(
            "list_children", {"tenant_id": tenant_id, "parent_run_id": parent_run_id}
        )
        return [self._run(row) for row in rows]

    def find_child_waits_to_settle(self, *, limit: int) -> list[tuple[str, str]]:
        rows = self._fetch("find_child_waits_to_settle", {"limit": limit})
        return [(row["tenant_id"], row["wait_id"]) for row in rows]

    def get_run_limit(self, tenant_id: str) -> int | None:
        row = self._one("get_run_limit", tenant_id=tenant_id)
        return None if row is None else int(row["max_running"])

    def set_run_limit(
        self, tenant_id: str, max_running: int | None, *, now: datetime, by: str
    ) -> None:
        """Limit the tenant's running runs to ``max_running``; ``None`` lifts the limit."""
        if max_running is None:
            self._fetch("delete_run_limit", {"tenant_id": tenant_id})
            return
        self._fetch(
            "set_run_limit",
            {
                "tenant_id": tenant_id,
                "max_running": max_running,
                "updated_at": self._ts_in(now),
                "updated_by": by,
            },
        )

    def next_due(self) -> datetime | None:
        """When the next scheduled run, wait expiry or lease expiry falls due, if any."""
        row = self._one("next_due")
        return None if row is None else self._opt_ts_out(row["due"])

    def run_figures(self, *, now: datetime, expiring_by: datetime) -> RunFigures:
        """The figures of every tenant's runs (a system transaction sees them all)."""
        (oldest,) = self._fetch("oldest_runs", {})
        (approvals,) = self._fetch("approval_counts", {"soon": self._ts_in(expiring_by)})
        (depth,) = self._fetch("queue_depth", {"now": self._ts_in(now)})
        return RunFigures(
            runs_by_status={
                row["status"]: int(row["runs"]) for row in self._fetch("count_runs_by_status", {})
            },
            running_since=self._opt_ts_out(oldest["running_since"]),
            waiting_since=self._opt_ts_out(oldest["waiting_since"]),
            queue_depth=int(depth["runs"]),
            approvals_pending=int(approvals["pending"]),
            approvals_expiring=int(approvals["expiring"]),
            failures_by_node={
                row["node"]: int(row["runs"]) for row in self._fetch("failures_by_node", {})
            },
        )

    def find_stuck(self, tenant_id: str, cutoffs: StuckCutoffs) -> list[StuckRow]:
        """Every run of ``tenant_id`` that a stuck-run query finds, once per cause."""
        base = {"tenant_id": tenant_id}
        rows = [
            *self._fetch("stuck_lease_expired", {**base, "cutoff": self._ts_in(cutoffs.lease)}),
            *self._fetch("stuck_expired_waits", {**base, "cutoff": self._ts_in(cutoffs.wait)}),
            *self._fetch("stuck_retries_exhausted", base),
            *self._fetch(
                "stuck_effect_unanswered", {**base, "cutoff": self._ts_in(cutoffs.effect)}
            ),
            *self._fetch(
                "stuck_repeated_takeovers",
                {**base, "takeovers": cutoffs.takeovers, "takeover_mark": TAKEOVER_MARK},
            ),
            *self._fetch("stuck_status_mismatch", base),
        ]
        for workflow, cutoff in sorted(cutoffs.checkpoint_by_workflow.items()):
            rows += self._fetch(
                "stuck_no_checkpoint",
                {**base, "workflow": workflow, "cutoff": self._ts_in(cutoff)},
            )
        return [
            StuckRow(
                run_id=row["run_id"],
                workflow=row["workflow"],
                status=row["status"],
                cause=row["cause"],
                since=self._ts_out(row["since"]),
            )
            for row in rows
        ]

    def _checkpoint_params(self, checkpoint: Checkpoint) -> dict[str, Any]:
        params = dict(checkpoint.__dict__)
        params["created_at"] = self._ts_in(checkpoint.created_at)
        return params

    def insert_checkpoint(self, checkpoint: Checkpoint) -> None:
        self._fetch("insert_checkpoint", self._checkpoint_params(checkpoint))

    def list_checkpoints(
        self, tenant_id: str, run_id: str, *, from_seq: int = 0
    ) -> list[Checkpoint]:
        rows = self._fetch(
            "list_checkpoints", {"tenant_id": tenant_id, "run_id": run_id, "from_seq": from_seq}
        )
        return [
            Checkpoint(**{**row, "created_at": self._ts_out(row["created_at"])}) for row in rows
        ]

    def _journal(self, row: Row) -> JournalEntry:
        return JournalEntry(
            **{
                **row,
                "retry_safe": bool(row["retry_safe"]),
                "started_at": self._ts_out(row["started_at"]),
                "finished_at": self._opt_ts_out(row["finished_at"]),
            }
        )

    def _journal_params(self, entry: JournalEntry) -> dict[str, Any]:
        values = entry.model_dump()
        values.update(
            kind=entry.kind.value,
            status=entry.status.value,
            started_at=self._ts_in(entry.started_at),
            finished_at=self._opt_ts_in(entry.finished_at),
        )
        return values

    def upsert_journal_entries(self, entries: Sequence[JournalEntry]) -> None:
        if entries:
            self._fetch_many("upsert_journal_entry", [self._journal_params(e) for e in entries])

    def list_journal_visit(
        self, tenant_id: str, run_id: str, node: str, visit: int
    ) -> list[JournalEntry]:
        rows = self._fetch(
            "list_journal_visit",
            {"tenant_id": tenant_id, "run_id": run_id, "node": node, "visit": visit},
        )
        return [self._journal(row) for row in rows]

    def list_journal(self, tenant_id: str, run_id: str) -> list[JournalEntry]:
        rows = self._fetch("list_journal", {"tenant_id": tenant_id, "run_id": run_id})
        return [self._journal(row) for row in rows]

    def _wait(self, row: Row) -> Wait:
        return Wait(
            **{
                **row,
                "request": canonical.loads(row["request"]),
                "resolution": canonical.loads(row["resolution"]) if row["resolution"] else None,
                "resume_at": self._opt_ts_out(row["resume_at"]),
                "expires_at": self._opt_ts_out(row["expires_at"]),
                "created_at": self._ts_out(row["created_at"]),
                "resolved_at": self._opt_ts_out(row["resolved_at"]),
            }
        )

    def insert_wait(self, wait: Wait) -> None:
        self._fetch("insert_wait", self._wait_params(wait))

    def _wait_params(self, wait: Wait) -> dict[str, Any]:
        params = wait.model_dump()
        params.update(
            kind=wait.kind.value,
            reason=wait.reason.value,
            status=wait.status.value,
            request=canonical.dumps(wait.request),
            resolution=None if wait.resolution is None else canonical.dumps(wait.resolution),
            resume_at=self._opt_ts_in(wait.resume_at),
            expires_at=self._opt_ts_in(wait.expires_at),
            created_at=self._ts_in(wait.created_at),
            resolved_at=self._opt_ts_in(wait.resolved_at),
        )
        return params

    def get_wait(self, tenant_id: str, wait_id: str) -> Wait | None:
        row = self._one("get_wait", tenant_id=tenant_id, wait_id=wait_id)
        return self._wait(row) if row else None

    def list_waits(
        self,
        tenant_id: str,
        *,
        kind: str | None = None,
        status: str | None = None,
        run_id: str | None = None,
        after_wait_id: str | None = None,
        newest_first: bool = False,
        limit: int = 100,
    ) -> list[Wait]:
        rows = self._fetch(
            "list_waits_newest" if newest_first else "list_waits",
            {
                "tenant_id": tenant_id,
                "kind": kind,
                "status": status,
                "run_id": run_id,
                "after_wait_id": after_wait_id,
                "limit": limit,
            },
        )
        return [self._wait(row) for row in rows]

    def find_expired_waits(self, *, now: datetime, limit: int) -> list[tuple[str, str]]:
        rows = self._fetch("find_expired_waits", {"now": self._ts_in(now), "limit": limit})
        return [(row["tenant_id"], row["wait_id"]) for row in rows]

    def _resolution_params(self, wait: Wait) -> dict[str, Any]:
        return {
            "tenant_id": wait.tenant_id,
            "wait_id": wait.wait_id,
            "status": wait.status.value,
            "resolved_at": self._opt_ts_in(wait.resolved_at),
            "resolved_by": wait.resolved_by,
            "resolution": canonical.dumps(wait.resolution or {}),
        }

    def resolve_wait(
        self,
        tenant_id: str,
        wait_id: str,
        *,
        status: str,
        resolved_at: datetime,
        resolved_by: str,
        resolution: Mapping[str, Any],
    ) -> bool:
        """Close an open wait; ``False`` if it was not open any more."""
        row = self._one(
            "resolve_wait",
            tenant_id=tenant_id,
            wait_id=wait_id,
            status=status,
            resolved_at=self._ts_in(resolved_at),
            resolved_by=resolved_by,
            resolution=canonical.dumps(dict(resolution)),
        )
        return row is not None

    def _event_params(self, event: RunEvent) -> dict[str, Any]:
        values = dict(event.__dict__)
        values.update(at=self._ts_in(event.at), data=canonical.dumps(event.data, trusted=True))
        return values

    def insert_events(self, events: Sequence[RunEvent]) -> None:
        if len(events) == 1:  # a step's one event
            self._fetch("insert_event", self._event_params(events[0]))
        elif events:
            self._fetch_many("insert_event", [self._event_params(e) for e in events])

    def write_step_txn(self, write: StepWrite) -> tuple[int, bool]:
        """:meth:`Storage.write_step` as a sequence of statements in an open transaction."""
        saved = self.save_run(
            write.run, expected_version=write.expected_version, expected_owner=write.expected_owner
        )
        if saved is None:
            raise LeaseLost()
        if saved[1] and write.cancellable:
            raise RunCancelled()
        self.upsert_journal_entries(write.journal)
        if write.checkpoint is not None:
            self.insert_checkpoint(write.checkpoint)
        for wait in write.waits:
            self.insert_wait(wait)
        for wait in write.resolved:
            self._fetch("resolve_wait", self._resolution_params(wait))
        self.insert_events(write.events)
        for child, checkpoint, event in write.children:
            self.insert_run(child)
            self.insert_checkpoint(checkpoint)
            self.insert_events([event])
        return saved

    def list_events(
        self, tenant_id: str, run_id: str, *, after_seq: int = 0, limit: int = 10_000
    ) -> list[RunEvent]:
        rows = self._fetch(
            "list_events",
            {"tenant_id": tenant_id, "run_id": run_id, "after_seq": after_seq, "limit": limit},
        )
        return [
            RunEvent(**{**row, "at": self._ts_out(row["at"]), "data": canonical.loads(row["data"])})
            for row in rows
        ]
