"""Stuck runs: each cause produced under the fake clock, found by ``app.runs.stuck`` only
once its threshold has passed, and reported by ``tether runs stuck`` with that cause."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.cli.main import app as cli_app
from tether.principals import Principal
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.stuck import StuckCause, StuckThresholds
from tether.runs.workflow import RetryPolicy
from tether.webhooks.models import WebhookEvent

START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
"""In the past, so the CLI (on the real clock) sees every cause the fake clock made."""
LEASE = timedelta(seconds=60)
GRACE = StuckThresholds().grace
PAST_GRACE = LEASE + GRACE + timedelta(seconds=1)


class Crash(BaseException):
    """A worker killed mid-node: nothing in the engine may catch it."""


class Note(BaseModel):
    outcome: str | None = None


idle: Workflow[Note] = Workflow("idle_sla", state=Note, checkpoint_sla=timedelta(hours=1))
dies: Workflow[Note] = Workflow("dies", state=Note)
calls_out: Workflow[Note] = Workflow("calls_out", state=Note)
asks: Workflow[Note] = Workflow("asks", state=Note)
approves: Workflow[Note] = Workflow("approves", state=Note)
flaky: Workflow[Note] = Workflow("flaky", state=Note)


@idle.node(start=True)
def idle_step(ctx: RunContext, state: Note) -> str:
    return END


@dies.node(start=True)
def die(ctx: RunContext, state: Note) -> str:
    raise Crash("killed")


def _never_returns(key: str) -> Any:
    raise Crash("killed while waiting on the outside world")


@calls_out.node(start=True)
def call_out(ctx: RunContext, state: Note) -> str:
    state.outcome = str(ctx.effect("call", _never_returns, request={}))
    return END


@asks.node(start=True)
def ask(ctx: RunContext, state: Note) -> str:
    state.outcome = str(
        ctx.interrupt("clarification_required", "which?", expires_in=timedelta(minutes=5))
    )
    return END


@approves.node(start=True)
def approve(ctx: RunContext, state: Note) -> str:
    decision = ctx.approval({"pay": 10}, rationale="r", expires_in=timedelta(hours=1))
    state.outcome = decision.status.value
    return END


@flaky.node(start=True, retry=RetryPolicy(max_attempts=2, backoff_s=1.0, jitter=0.0))
def fail(ctx: RunContext, state: Note) -> str:
    raise ValueError("always")


registry = WorkflowRegistry(idle, dies, calls_out, asks, approves, flaky)


@dataclass
class Desk:
    app: Tether
    clock: FakeClock
    backend: TestDatabase
    bot: Principal
    olga: Principal
    vic: Principal

    def execute(self, run_id: str, owner: str = "w1") -> Any:
        executor = self.app.executor(registry, owner=owner, lease_s=LEASE.total_seconds())
        return executor.execute("acme", run_id)

    def crash(self, run_id: str, owner: str) -> None:
        with pytest.raises(Crash):
            self.execute(run_id, owner)

    def causes(self, run_id: str) -> set[StuckCause]:
        found = self.app.runs.stuck(self.olga, workflows=registry)
        return {row.cause for row in found if row.run_id == run_id}

    def cli_causes(self, run_id: str) -> set[str]:
        env = {"TETHER_URL": self.backend.url, "TETHER_EMBEDDER": "none"}
        result = CliRunner().invoke(
            cli_app,
            [
                "runs",
                "stuck",
                "-t",
                "acme",
                "--as",
                "vic",
                "--json",
                "--workflows",
                "tests.conformance.test_runs_stuck:registry",
            ],
            env=env,
        )
        assert result.exit_code == 0, result.output
        return {row["cause"] for row in json.loads(result.stdout) if row["run_id"] == run_id}


@pytest.fixture
def desk(backend: TestDatabase) -> Iterator[Desk]:
    clock = FakeClock(START)
    app = Tether.open(backend.settings(), clock=clock)
    try:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        for principal_id, roles in {
            "bot": ["agent"],
            "olga": ["operator"],
            "vic": ["viewer"],
        }.items():
            app.tenants.grant(alice, principal_id, roles)
        yield Desk(
            app,
            clock,
            backend,
            app.tenants.principal("acme", "bot"),
            app.tenants.principal("acme", "olga"),
            app.tenants.principal("acme", "vic"),
        )
    finally:
        app.close()


def _reported(desk: Desk, run_id: str, cause: StuckCause) -> None:
    assert cause in desk.causes(run_id)
    assert cause.value in desk.cli_causes(run_id)


def test_no_checkpoint_within_the_workflow_sla(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, idle, Note())
    desk.clock.advance(timedelta(minutes=59))
    assert desk.causes(run.run_id) == set()
    desk.clock.advance(timedelta(minutes=2))
    assert desk.causes(run.run_id) == {StuckCause.NO_CHECKPOINT}
    assert desk.app.runs.stuck(desk.olga) == [], "without the registry no SLA applies"
    _reported(desk, run.run_id, StuckCause.NO_CHECKPOINT)


def test_a_lease_that_ran_out_unclaimed(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, dies, Note())
    desk.crash(run.run_id, "w1")
    desk.clock.advance(LEASE + GRACE - timedelta(seconds=1))
    assert desk.causes(run.run_id) == set()
    desk.clock.advance(timedelta(seconds=2))
    assert desk.causes(run.run_id) == {StuckCause.LEASE_EXPIRED}
    _reported(desk, run.run_id, StuckCause.LEASE_EXPIRED)


def test_a_worker_that_died_repeatedly(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, dies, Note())
    desk.crash(run.run_id, "w1")
    for takeover in range(1, 4):
        desk.clock.advance(LEASE + timedelta(seconds=1))
        desk.crash(run.run_id, f"w{takeover + 1}")
        found = StuckCause.REPEATED_TAKEOVERS in desk.causes(run.run_id)
        assert found is (takeover >= 3)
    _reported(desk, run.run_id, StuckCause.REPEATED_TAKEOVERS)


def test_an_effect_that_never_returned(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, calls_out, Note())
    desk.crash(run.run_id, "w1")
    desk.clock.advance(timedelta(minutes=14))
    assert StuckCause.EFFECT_UNANSWERED not in desk.causes(run.run_id)
    desk.clock.advance(timedelta(minutes=2))
    assert StuckCause.EFFECT_UNANSWERED in desk.causes(run.run_id)
    _reported(desk, run.run_id, StuckCause.EFFECT_UNANSWERED)


def test_a_question_past_its_expiry(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, asks, Note())
    assert desk.execute(run.run_id).status is RunStatus.WAITING_FOR_USER
    desk.clock.advance(timedelta(minutes=5) + GRACE - timedelta(seconds=1))
    assert desk.causes(run.run_id) == set()
    desk.clock.advance(timedelta(seconds=2))
    assert desk.causes(run.run_id) == {StuckCause.WAIT_EXPIRED}
    _reported(desk, run.run_id, StuckCause.WAIT_EXPIRED)


def test_an_approval_past_its_expiry(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, approves, Note())
    assert desk.execute(run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
    desk.clock.advance(timedelta(hours=1) + GRACE + timedelta(seconds=1))
    assert desk.causes(run.run_id) == {StuckCause.APPROVAL_EXPIRED}
    _reported(desk, run.run_id, StuckCause.APPROVAL_EXPIRED)
    assert desk.app.runs.expire_waits() == 1
    assert desk.causes(run.run_id) == set(), "once expired, the run moves on"


def test_retries_exhausted(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, flaky, Note())
    assert desk.execute(run.run_id).status is RunStatus.SCHEDULED
    assert desk.causes(run.run_id) == set()
    desk.clock.advance(timedelta(seconds=2))
    assert desk.execute(run.run_id).status is RunStatus.FAILED
    assert desk.causes(run.run_id) == {StuckCause.RETRIES_EXHAUSTED}
    _reported(desk, run.run_id, StuckCause.RETRIES_EXHAUSTED)


def test_status_and_queue_disagree(desk: Desk) -> None:
    run = desk.app.runs.start(desk.bot, dies, Note())
    assert desk.causes(run.run_id) == set()
    with desk.backend.raw() as raw:
        raw.execute(
            "UPDATE runs SET status = 'scheduled', resume_at = NULL WHERE run_id = ?",
            [run.run_id],
        )
    assert desk.causes(run.run_id) == {StuckCause.STATUS_MISMATCH}
    _reported(desk, run.run_id, StuckCause.STATUS_MISMATCH)


def test_stuck_rows_carry_age_and_a_command(desk: Desk) -> None:
    """(Who may list them is the permission map's ``runs.stuck``, checked with every
    other operation in ``test_permission_map.py``.)"""
    run = desk.app.runs.start(desk.bot, dies, Note())
    desk.crash(run.run_id, "w1")
    desk.clock.advance(PAST_GRACE + timedelta(minutes=10))
    (row,) = desk.app.runs.stuck(desk.vic)
    assert row.age_s == (PAST_GRACE + timedelta(minutes=10) - LEASE).total_seconds()
    assert row.suggested.startswith("tether ")


def test_idle_workers_send_run_stuck_once_per_run_and_cause(desk: Desk) -> None:
    alice = desk.app.tenants.principal("acme", "alice")
    desk.app.webhooks.allow(alice, "http://127.0.0.1:9/hooks/")
    desk.app.webhooks.add_endpoint(
        desk.olga, "http://127.0.0.1:9/hooks/ops", events=[WebhookEvent.RUN_STUCK]
    )
    run = desk.app.runs.start(desk.bot, calls_out, Note())
    desk.crash(run.run_id, "w1")

    def idle_pass() -> list[tuple[str, str]]:
        for task in desk.app.idle_tasks("w9", registry):
            task()
        desk.clock.advance(timedelta(minutes=2))
        return sorted(
            (d.payload["data"]["run_id"], d.payload["data"]["cause"])
            for d in desk.app.webhooks.deliveries(desk.olga)
        )

    assert idle_pass() == []
    desk.clock.advance(PAST_GRACE)
    assert idle_pass() == [(run.run_id, "lease_expired")]
    desk.clock.advance(timedelta(minutes=15))
    expected = [(run.run_id, "effect_unanswered"), (run.run_id, "lease_expired")]
    assert idle_pass() == expected
    assert idle_pass() == expected, "each run and cause is notified once"
