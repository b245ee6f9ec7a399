"""Signed webhooks against a real HTTP receiver: signatures verify, failures are retried
with backoff, each event arrives under one delivery id, and URLs off the allowlist are
refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, Harness, open_harness
from tests.support import TestDatabase
from tether.errors import InvalidInput, PermissionDenied
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.webhooks.delivery import MAX_ATTEMPTS, MAX_BACKOFF
from tether.webhooks.models import DeliveryStatus, WebhookEvent


@dataclass
class Receiver:
    """A local HTTP server that checks each request's signature like a real receiver."""

    secret: bytes = b""
    now: float = 0.0
    failures: Counter[str] = field(default_factory=Counter)
    """Answer 500 to the next N requests of each event."""
    seen: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def delivered(self, event: str) -> list[dict[str, Any]]:
        return [r for r in self.seen if r["event"] == event and r["answer"] == 200]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            stamp = self.headers["Tether-Timestamp"]
            expected = (
                "v1="
                + hmac.new(state.secret, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
            )
            valid = (
                hmac.compare_digest(expected, self.headers["Tether-Signature"])
                and abs(state.now - int(stamp)) <= 300
            )
            event = self.headers["Tether-Event"]
            answer = 401 if not valid else 200
            if valid and state.failures[event] > 0:
                state.failures[event] -= 1
                answer = 500
            payload = json.loads(body)
            state.seen.append(
                {
                    "delivery_id": self.headers["Tether-Delivery"],
                    "event": event,
                    "valid": valid,
                    "answer": answer,
                    "payload": payload,
                }
            )
            self.send_response(answer)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    state.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=state.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.server.shutdown()
        state.server.server_close()


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Claim(BaseModel):
    decided: str = ""


def approval_workflow() -> Workflow[Claim]:
    wf: Workflow[Claim] = Workflow("claims", state=Claim)

    @wf.node(start=True)
    def decide(ctx: RunContext, s: Claim) -> str:
        decision = ctx.approval(
            {"pay": 100}, rationale="small claim", expires_in=timedelta(hours=2)
        )
        s.decided = decision.status.value
        return END

    return wf


def deliver(h: Harness, receiver: Receiver) -> int:
    receiver.now = h.clock.now().timestamp()
    h.app.webhooks.scan(TENANT)
    return h.app.dispatcher.send_due()


def test_signed_deliveries_retries_and_one_delivery_id_per_event(
    h: Harness, receiver: Receiver
) -> None:
    receiver.secret = bytes.fromhex(h.app.webhooks.signing_secret(h.admin))
    h.app.webhooks.allow(h.admin, receiver.url("/hooks/"))
    with pytest.raises(PermissionDenied, match="allowlist"):
        h.app.webhooks.add_endpoint(h.operator, receiver.url("/other/tether"))
    with pytest.raises(PermissionDenied, match="allowlist"):
        h.app.webhooks.add_endpoint(h.operator, "http://hooks.example.com/hooks/tether")
    with pytest.raises(InvalidInput):
        h.app.webhooks.add_endpoint(h.operator, "ftp://127.0.0.1/hooks/x")
    with pytest.raises(PermissionDenied):
        h.app.webhooks.add_endpoint(h.viewer, receiver.url("/hooks/tether"))
    h.app.webhooks.add_endpoint(h.operator, receiver.url("/hooks/tether"))
    assert deliver(h, receiver) == 0

    wf = approval_workflow()
    executor = h.executor(WorkflowRegistry(wf), "worker-1")
    waiting = executor.execute(TENANT, h.app.runs.start(h.agent, wf, Claim()).run_id)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    cancelled = h.app.runs.start(h.agent, wf, Claim())
    h.app.runbook.cancel(h.operator, cancelled.run_id, reason="customer withdrew")
    h.clock.advance(timedelta(seconds=1))
    receiver.failures["approval.requested"] = 2
    assert deliver(h, receiver) == 2

    h.clock.advance(timedelta(minutes=61))
    h.app.webhooks.notify(h.operator, WebhookEvent.RUN_STUCK, waiting.run_id, {"cause": "lease"})
    assert deliver(h, receiver) == 3
    for seconds in (30, 60):
        h.clock.advance(timedelta(seconds=seconds))
        deliver(h, receiver)
    assert deliver(h, receiver) == 0

    requested = [r for r in receiver.seen if r["event"] == "approval.requested"]
    assert [r["answer"] for r in requested] == [500, 500, 200]
    assert len({r["delivery_id"] for r in requested}) == 1
    assert all(r["valid"] for r in receiver.seen)
    assert {r["event"] for r in receiver.seen} == {
        "approval.requested",
        "approval.expiring",
        "run.cancelled",
        "run.stuck",
    }
    for event in ("approval.expiring", "run.cancelled", "run.stuck"):
        (one,) = receiver.delivered(event)
        assert one["payload"]["delivery_id"] == one["delivery_id"]
    (cancel,) = receiver.delivered("run.cancelled")
    assert cancel["payload"]["data"]["reason"] == h.app.notes.digest(TENANT, "customer withdrew")
    (approval,) = receiver.delivered("approval.requested")
    assert approval["payload"]["data"]["run_id"] == waiting.run_id
    log = h.app.webhooks.deliveries(h.viewer)
    assert {d.status for d in log} == {DeliveryStatus.DELIVERED}
    assert next(d for d in log if d.event is WebhookEvent.APPROVAL_REQUESTED).attempts == 3

    finished = h.executor(WorkflowRegistry(wf), "worker-1")
    h.app.runs.decide(h.approver, waiting.wait_id or "", approve=True)
    finished.execute(TENANT, waiting.run_id)
    deliver(h, receiver)
    (done,) = receiver.delivered("run.finished")
    assert done["payload"]["data"]["status"] == "completed"
    accepted = [r["delivery_id"] for r in receiver.seen if r["answer"] == 200]
    assert len(accepted) == len(set(accepted)) == 5
    assert len(receiver.seen) == len(accepted) + 2


def test_a_failing_receiver_exhausts_attempts_and_retry_sends_it_again(
    h: Harness, receiver: Receiver
) -> None:
    receiver.secret = bytes.fromhex(h.app.webhooks.signing_secret(h.admin))
    h.app.webhooks.allow(h.admin, receiver.url("/hooks"))
    h.app.webhooks.add_endpoint(
        h.operator, receiver.url("/hooks/a"), events=[WebhookEvent.RUN_STUCK]
    )
    receiver.failures["run.stuck"] = MAX_ATTEMPTS
    run = h.app.runs.start(h.agent, approval_workflow(), Claim())
    h.app.webhooks.notify(h.operator, WebhookEvent.RUN_STUCK, run.run_id, {"cause": "lease"})
    for _ in range(MAX_ATTEMPTS):
        deliver(h, receiver)
        h.clock.advance(MAX_BACKOFF)
    (failed,) = h.app.webhooks.deliveries(h.operator)
    assert (failed.status, failed.attempts, failed.last_error) == (
        "failed",
        MAX_ATTEMPTS,
        "HTTP 500",
    )
    assert deliver(h, receiver) == 0
    with pytest.raises(PermissionDenied):
        h.app.webhooks.retry(h.viewer, failed.delivery_id)
    h.app.webhooks.retry(h.operator, failed.delivery_id)
    assert deliver(h, receiver) == 1
    (delivered,) = h.app.webhooks.deliveries(h.operator)
    assert (delivered.status, delivered.attempts) == ("delivered", MAX_ATTEMPTS + 1)
    assert {r["delivery_id"] for r in receiver.seen} == {failed.delivery_id}
    secret = h.app.webhooks.signing_secret(h.admin)
    trail = json.dumps(
        [e.model_dump(mode="json") for e in h.app.audit.entries(h.admin, limit=1000)]
    )
    assert secret not in trail
    assert "webhook.retried" in trail


def test_a_url_taken_off_the_allowlist_is_refused_before_sending(
    h: Harness, receiver: Receiver
) -> None:
    receiver.secret = bytes.fromhex(h.app.webhooks.signing_secret(h.admin))
    prefix = receiver.url("/hooks/")
    h.app.webhooks.allow(h.admin, prefix)
    h.app.webhooks.add_endpoint(h.operator, receiver.url("/hooks/a"))
    run = h.app.runs.start(h.agent, approval_workflow(), Claim())
    h.app.webhooks.notify(h.operator, WebhookEvent.RUN_STUCK, run.run_id, {"cause": "lease"})
    h.app.webhooks.disallow(h.admin, prefix)
    deliver(h, receiver)
    (refused,) = h.app.webhooks.deliveries(h.operator)
    assert refused.status is DeliveryStatus.REFUSED
    assert receiver.seen == []
