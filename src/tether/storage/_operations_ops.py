"""Typed storage operations of run retention, legal holds on runs, operator notes,
housekeeping leases and the run inbox, written once over named queries."""

from __future__ import annotations

from datetime import datetime

from tether.errors import StorageError
from tether.storage._transaction import QueryTransaction
from tether.storage.rows import InboxRow, RetentionCandidate, RunHoldRow, RunRowCounts


class OperationsOps(QueryTransaction):
    # -- retention policies and compaction ------------------------------------------------

    def upsert_retention_policy(
        self, tenant_id: str, workflow: str, keep_days: int, *, at: datetime, by: str
    ) -> None:
        self._fetch(
            "upsert_retention_policy",
            {
                "tenant_id": tenant_id,
                "workflow": workflow,
                "keep_days": keep_days,
                "set_at": self._ts_in(at),
                "set_by": by,
            },
        )

    def delete_retention_policy(self, tenant_id: str, workflow: str) -> bool:
        return bool(
            self._fetch("delete_retention_policy", {"tenant_id": tenant_id, "workflow": workflow})
        )

    def list_retention_policies(self, tenant_id: str) -> dict[str, int]:
        rows = self._fetch("list_retention_policies", {"tenant_id": tenant_id})
        return {row["workflow"]: int(row["keep_days"]) for row in rows}

    def list_retention_candidates(
        self, tenant_id: str, *, finished_before: datetime, after_run_id: str, limit: int
    ) -> list[RetentionCandidate]:
        rows = self._fetch(
            "list_retention_candidates",
            {
                "tenant_id": tenant_id,
                "finished_before": self._ts_in(finished_before),
                "after_run_id": after_run_id,
                "limit": limit,
            },
        )
        return [
            RetentionCandidate(
                run_id=row["run_id"],
                workflow=row["workflow"],
                finished_at=self._ts_out(row["updated_at"]),
                held=bool(row["held"]),
            )
            for row in rows
        ]

    def count_run_rows(self, tenant_id: str, run_id: str) -> RunRowCounts:
        row = self._one("count_run_rows", tenant_id=tenant_id, run_id=run_id)
        if row is None:
            raise StorageError("counting a run's rows returned nothing")
        return RunRowCounts(
            events=int(row["events"]),
            checkpoints=int(row["checkpoints"]),
            journal=int(row["journal"]),
            effects=int(row["effects"]),
            inbox=int(row["inbox"]),
        )

    def compact_run(
        self, tenant_id: str, run_id: str, *, final_seq: int, final_state_json: str, at: datetime
    ) -> bool:
        """Keep only the final checkpoint (made full), the effect journal without payloads
        and the run row; whether the run was still finished (else nothing changed)."""
        ids = {"tenant_id": tenant_id, "run_id": run_id}
        saved = self._fetch(
            "set_run_retained_checkpoint",
            {**ids, "seq": final_seq, "full_bytes": len(final_state_json.encode())},
        )
        if not saved:
            return False
        self._fetch("make_checkpoint_full", {**ids, "seq": final_seq, "payload": final_state_json})
        self._fetch("delete_run_checkpoints_except", {**ids, "keep_seq": final_seq})
        self._fetch("delete_run_events", ids)
        self._fetch("delete_run_journal_except_effects", ids)
        self._fetch("clear_run_journal_payloads", ids)
        self._fetch("delete_run_inbox", ids)
        self._fetch("insert_run_retained", {**ids, "retained_at": self._ts_in(at)})
        return True

    # -- legal holds and notes -------------------------------------------------------------

    def insert_run_hold(self, tenant_id: str, row: RunHoldRow) -> None:
        self._fetch(
            "insert_run_hold",
            {
                "tenant_id": tenant_id,
                "hold_id": row.hold_id,
                "run_id": row.run_id,
                "note_digest": row.note_digest,
                "created_at": self._ts_in(row.created_at),
                "created_by": row.created_by,
            },
        )

    def release_run_holds(self, tenant_id: str, run_id: str, *, at: datetime, by: str) -> int:
        rows = self._fetch(
            "release_run_holds",
            {
                "tenant_id": tenant_id,
                "run_id": run_id,
                "released_at": self._ts_in(at),
                "released_by": by,
            },
        )
        return len(rows)

    def list_run_holds(self, tenant_id: str, *, limit: int) -> list[RunHoldRow]:
        rows = self._fetch("list_run_holds", {"tenant_id": tenant_id, "limit": limit})
        return [
            RunHoldRow(
                hold_id=row["hold_id"],
                run_id=row["run_id"],
                note_digest=row["note_digest"],
                created_at=self._ts_out(row["created_at"]),
                created_by=row["created_by"],
            )
            for row in rows
        ]

    def insert_operator_note(
        self, tenant_id: str, digest: str, text: str, *, at: datetime, by: str
    ) -> None:
        self._fetch(
            "insert_operator_note",
            {
                "tenant_id": tenant_id,
                "digest": digest,
                "text": text,
                "created_at": self._ts_in(at),
                "created_by": by,
            },
        )

    def get_operator_note(self, tenant_id: str, digest: str) -> str | None:
        row = self._one("get_operator_note", tenant_id=tenant_id, digest=digest)
        return str(row["text"]) if row else None

    def delete_operator_note(self, tenant_id: str, digest: str) -> bool:
        return bool(self._fetch("delete_operator_note", {"tenant_id": tenant_id, "digest": digest}))

    # -- housekeeping leases ---------------------------------------------------------------

    def acquire_housekeeping_lease(
        self,
        tenant_id: str,
        *,
        owner: str,
        now: datetime,
        lease_expires_at: datetime,
        force: bool,
    ) -> bool:
        """Take the tenant's housekeeping lease if nobody holds it (or it ran out) and a
        pass is due (or ``force``)."""
        self._fetch(
            "ensure_housekeeping_row", {"tenant_id": tenant_id, "next_due_at": self._ts_in(now)}
        )
        rows = self._fetch(
            "acquire_housekeeping_lease",
            {
                "tenant_id": tenant_id,
                "owner": owner,
                "now": self._ts_in(now),
                "lease_expires_at": self._ts_in(lease_expires_at),
                "force": 1 if force else 0,
            },
        )
        return bool(rows)

    def finish_housekeeping_lease(
        self, tenant_id: str, *, owner: str, now: datetime, next_due_at: datetime
    ) -> bool:
        rows = self._fetch(
            "finish_housekeeping_lease",
            {
                "tenant_id": tenant_id,
                "owner": owner,
                "now": self._ts_in(now),
                "next_due_at": self._ts_in(next_due_at),
            },
        )
        return bool(rows)

    def release_housekeeping_lease(self, tenant_id: str, *, owner: str) -> None:
        self._fetch("release_housekeeping_lease", {"tenant_id": tenant_id, "owner": owner})

    # -- the run inbox ---------------------------------------------------------------------

    def max_inbox_seq(self, tenant_id: str, run_id: str) -> int:
        row = self._one("max_inbox_seq", tenant_id=tenant_id, run_id=run_id)
        return int(row["seq"]) if row else 0

    def insert_inbox_message(self, tenant_id: str, run_id: str, row: InboxRow) -> None:
        self._fetch(
            "insert_inbox_message",
            {
                "tenant_id": tenant_id,
                "run_id": run_id,
                "seq": row.seq,
                "message_id": row.message_id,
                "message": row.message_json,
                "sent_at": self._ts_in(row.sent_at),
                "sent_by": row.sent_by,
            },
        )

    def list_inbox_messages(
        self, tenant_id: str, run_id: str, *, after_seq: int, limit: int
    ) -> list[InboxRow]:
        rows = self._fetch(
            "list_inbox_messages",
            {"tenant_id": tenant_id, "run_id": run_id, "after_seq": after_seq, "limit": limit},
        )
        return [
            InboxRow(
                seq=int(row["seq"]),
                message_id=row["message_id"],
                message_json=row["message"],
                sent_at=self._ts_out(row["sent_at"]),
                sent_by=row["sent_by"],
            )
            for row in rows
        ]

    def list_journal_step_results(self, tenant_id: str, run_id: str, name: str) -> list[str]:
        """The results of the run's finished steps called ``name``, in no set order."""
        rows = self._fetch(
            "list_journal_step", {"tenant_id": tenant_id, "run_id": run_id, "name": name}
        )
        return [row["result"] for row in rows if row["result"] is not None]
