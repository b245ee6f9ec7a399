"""A durable inbox per run: new user input for a run that is running or waiting.

``app.inbox.send(principal, run_id, message)`` stores the message with the next sequence
number of the run's inbox. A node reads what arrived since its last read with
``ctx.receive()``, which is journaled like a step: the messages a read returned are in
the journal, so a replay of the node (after a crash, a retry, an approval) receives the
same ones, and the next read starts after the last message any journaled read returned.
Sending does not wake a waiting run; the run reads its inbox the next time it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import Conflict, InvalidInput, NotFound
from tether.ids import IdSource, parse_id
from tether.permissions import authorize
from tether.principals import Principal
from tether.runs.claim import Claim
from tether.storage.base import Storage
from tether.storage.rows import InboxRow
from tether.validation import guarded

INBOX_STEP = "tether.inbox"
"""The journal name of a ``ctx.receive()`` read."""

MAX_MESSAGE_BYTES = 64 * 1024
_READ_LIMIT = 1000


class _Finished(Exception):
    """The run finished: raised inside the send's transaction to leave it."""


class InboxMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int
    message_id: str
    message: Any
    sent_at: datetime
    sent_by: str


@guarded
class Inbox:
    """``app.inbox``: send input to a run, read what it was sent."""

    def __init__(self, storage: Storage, clock: Clock, ids: IdSource, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._ids = ids
        self._audit = audit

    def send(self, principal: Principal, run_id: str, message: Any) -> InboxMessage:
        """Deliver ``message`` (any JSON value, at most 64 KiB) to an unfinished run.

        Raises:
            NotFound: no such run in the principal's tenant.
            Conflict: the run has finished.
            InvalidInput: the message is not JSON or is too large.
        """
        authorize(principal, "inbox.send")
        parse_id(run_id, what="run id")
        text = canonical.dumps(message)
        if len(text.encode()) > MAX_MESSAGE_BYTES:
            raise InvalidInput(f"the message is over {MAX_MESSAGE_BYTES} bytes as JSON")
        for _ in range(5):
            sent = self._insert(principal, run_id, text)
            if sent is not None:
                return sent
        raise Conflict(f"run {run_id}: its inbox kept changing under this send; send again")

    def _insert(self, principal: Principal, run_id: str, text: str) -> InboxMessage | None:
        """Store the message under the next sequence number; ``None`` if a concurrent
        send took that number first."""
        tenant = principal.tenant_id
        try:
            with self._storage.transaction(tenant) as txn:
                run = txn.get_run(tenant, run_id)
                if run is None:
                    raise NotFound(f"run {run_id} does not exist in tenant {tenant!r}")
                if run.status.finished:
                    raise _Finished(run.status.value)
                row = InboxRow(
                    seq=txn.max_inbox_seq(tenant, run_id) + 1,
                    message_id=str(self._ids.new_id()),
                    message_json=text,
                    sent_at=self._clock.now(),
                    sent_by=principal.principal_id,
                )
                txn.insert_inbox_message(tenant, run_id, row)
                self._audit.record_by_txn(
                    txn,
                    principal,
                    action="run.message_sent",
                    target=f"run:{run_id}",
                    details={"message_id": row.message_id, "seq": row.seq},
                )
        except _Finished as exc:
            raise Conflict(f"run {run_id} is {exc}; a finished run reads no input") from None
        except Conflict:
            return None
        return _message(row)

    def messages(
        self, principal: Principal, run_id: str, *, after_seq: int = 0, limit: int = 100
    ) -> list[InboxMessage]:
        """What was sent to the run, oldest first (read or not)."""
        authorize(principal, "inbox.messages")
        parse_id(run_id, what="run id")
        with self._storage.transaction(principal.tenant_id, write=False) as txn:
            rows = txn.list_inbox_messages(
                principal.tenant_id, run_id, after_seq=after_seq, limit=limit
            )
        return [_message(row) for row in rows]


def receive_messages(step: Callable[..., Any], claim: Claim) -> list[InboxMessage]:
    """``ctx.receive()``: the messages after the last one a journaled read returned,
    read inside the step ``step`` journals."""
    return [InboxMessage.model_validate(m) for m in step(INBOX_STEP, lambda: _unread(claim))]


def _unread(claim: Claim) -> list[dict[str, Any]]:
    run = claim.run
    with claim.storage.transaction(run.tenant_id, write=False) as txn:
        done = txn.list_journal_step_results(run.tenant_id, run.run_id, INBOX_STEP)
        reads = [canonical.loads(result) for result in done + claim.buffered_results(INBOX_STEP)]
        cursor = max((m["seq"] for read in reads for m in read), default=0)
        rows = txn.list_inbox_messages(
            run.tenant_id, run.run_id, after_seq=cursor, limit=_READ_LIMIT
        )
    return [_message(row).model_dump(mode="json") for row in rows]


def _message(row: InboxRow) -> InboxMessage:
    return InboxMessage(
        seq=row.seq,
        message_id=row.message_id,
        message=canonical.loads(row.message_json),
        sent_at=row.sent_at,
        sent_by=row.sent_by,
    )
