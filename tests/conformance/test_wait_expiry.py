"""Waits past their expiry: an approval nobody decided sends the run down its rejection
path; an unanswered question fails the node (unless the node handles it)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.errors import InterruptExpired
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry


class Ask(BaseModel):
    outcome: str | None = None


approval_flow: Workflow[Ask] = Workflow("expiring_approval", state=Ask)


@approval_flow.node(start=True)
def ask_approval(ctx: RunContext, state: Ask) -> str:
    decision = ctx.approval({"pay": 10}, rationale="r", expires_in=timedelta(hours=1))
    state.outcome = decision.status.value
    return END


question_flow: Workflow[Ask] = Workflow("expiring_question", state=Ask)


@question_flow.node(start=True)
def ask_question(ctx: RunContext, state: Ask) -> str:
    try:
        state.outcome = ctx.interrupt(
            "clarification_required", "which?", expires_in=timedelta(minutes=5)
        )
    except InterruptExpired:
        state.outcome = "no answer in time"
    return END


def open_app(backend: TestDatabase, clock: FakeClock) -> Tether:
    app = Tether.open(backend.settings(), clock=clock)
    app.tenants.create("acme", admin="alice")
    alice = app.tenants.principal("acme", "alice")
    app.tenants.grant(alice, "bot", ["agent"])
    return app


def test_expired_approval_is_never_approved(backend: TestDatabase) -> None:
    clock = FakeClock()
    with open_app(backend, clock) as app:
        bot = app.tenants.principal("acme", "bot")
        alice = app.tenants.principal("acme", "alice")
        executor = app.executor(WorkflowRegistry(approval_flow))
        run = app.runs.start(bot, approval_flow, Ask())
        assert executor.execute("acme", run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
        assert app.runs.expire_waits() == 0
        clock.advance(timedelta(hours=2))
        assert app.runs.expire_waits() == 1
        finished = executor.execute("acme", run.run_id)
        assert finished.status is RunStatus.COMPLETED
        assert app.runs.state(alice, run.run_id)["outcome"] == "expired"
        assert [e.type for e in app.runs.events(alice, run.run_id)].count("wait.expired") == 1


def test_expired_question_raises_in_the_node(backend: TestDatabase) -> None:
    clock = FakeClock()
    with open_app(backend, clock) as app:
        bot = app.tenants.principal("acme", "bot")
        alice = app.tenants.principal("acme", "alice")
        executor = app.executor(WorkflowRegistry(question_flow))
        run = app.runs.start(bot, question_flow, Ask())
        assert executor.execute("acme", run.run_id).status is RunStatus.WAITING_FOR_USER
        clock.advance(timedelta(minutes=10))
        assert app.runs.expire_waits() == 1
        assert executor.execute("acme", run.run_id).status is RunStatus.COMPLETED
        assert app.runs.state(alice, run.run_id)["outcome"] == "no answer in time"
