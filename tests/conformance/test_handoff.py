"""Handoff documents from a run's durable state, on every backend.

The main case is the real case review of ``examples/case_review`` (its workflow and its
case service on a SQLite file of the test's own), driven in-process with a fake clock:
at its approval wait the handoff must name the completed steps, the pending approval and
the next action. Completed, failed and human-review runs are covered too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from examples.case_review import workflow as case_workflow
from examples.case_review.service import CaseService
from pydantic import BaseModel
from typer.testing import CliRunner

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.cli.main import app as cli_app
from tether.errors import NotFound, PermissionDenied
from tether.principals import Principal
from tether.runs import (
    END,
    InterruptReason,
    RetryPolicy,
    RunContext,
    RunStatus,
    Workflow,
    WorkflowRegistry,
)


@dataclass
class CaseDesk:
    app: Tether
    service: CaseService
    agent: Principal
    operator: Principal
    approver: Principal
    viewer: Principal

    def execute(self, registry: WorkflowRegistry, run_id: str) -> None:
        self.app.executor(registry, owner="worker-1").execute("acme", run_id)

    def section(self, markdown: str, title: str) -> str:
        """The text of one ``## title`` section of a handoff."""
        found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
        assert found is not None, f"no section {title!r} in:\n{markdown}"
        return found.group(1)


@pytest.fixture
def desk(
    backend: TestDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[CaseDesk]:
    monkeypatch.setenv("CASE_SERVICE_DB", str(tmp_path / "case-service.db"))
    case_workflow.service.cache_clear()
    clock = FakeClock()
    app = Tether.open(backend.settings(embedder="none"), clock=clock)
    app.tenants.create("acme", admin="alice")
    alice = app.tenants.principal("acme", "alice")
    for principal, role in (
        ("case-agent", "agent"),
        ("olivia", "operator"),
        ("sam", "approver"),
        ("vic", "viewer"),
    ):
        app.tenants.grant(alice, principal, [role])
    service = case_workflow.service()
    service.seed()
    try:
        yield CaseDesk(
            app,
            service,
            app.tenants.principal("acme", "case-agent"),
            app.tenants.principal("acme", "olivia"),
            app.tenants.principal("acme", "sam"),
            app.tenants.principal("acme", "vic"),
        )
    finally:
        service.close()
        case_workflow.service.cache_clear()
        app.close()


def case_review_at_approval(desk: CaseDesk) -> str:
    """Start the case review, answer its question, and run it to its approval wait."""
    registry = case_workflow.registry
    run = desk.app.runs.start(
        desk.agent, case_workflow.case_review, case_workflow.CaseReview(case_id="C-1001")
    )
    desk.execute(registry, run.run_id)
    question = desk.app.runs.get(desk.operator, run.run_id).wait_id
    assert question is not None
    desk.app.runs.answer(desk.operator, question, "Loss adjuster report LA-5521")
    desk.execute(registry, run.run_id)
    assert desk.app.runs.get(desk.operator, run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
    return run.run_id


def test_the_case_review_at_its_approval_wait(desk: CaseDesk) -> None:
    run_id = case_review_at_approval(desk)
    approval = desk.app.runs.get(desk.operator, run_id).wait_id
    assert approval is not None
    note_key = next(
        entry.idempotency_key
        for entry in desk.app.runs.journal(desk.operator, run_id)
        if entry.name == "create_case_note"
    )

    markdown = desk.app.runs.handoff(desk.viewer, run_id)

    assert markdown.startswith(f"# Handoff: run {run_id}\n")
    assert "**waiting_for_approval** at node `request_approval`" in markdown
    assert "C-1001" in desk.section(markdown, "Goal")
    completed = desk.section(markdown, "Completed")
    nodes = re.findall(r"^\d+\. `([a-z_]+)`", completed, re.M)
    assert nodes == [
        "load_case",
        "retrieve_policy",
        "check_evidence",
        "draft_recommendation",
        "create_case_note",
    ]
    assert f"effect `create_case_note` applied (key `{note_key}`)" in completed
    assert "step `draft_recommendation` (412 tokens in, 58 out)" in completed
    assert f"approval `{approval}` asked: Approve claim C-1001; waiting" in completed
    blocker = desk.section(markdown, "Current blocker")
    assert f"Approval `{approval}` is pending: Approve claim C-1001" in blocker
    assert "asked by `case-agent`" in blocker
    assert "decided by role `approver`" in blocker
    assert '"amount": 4200' in blocker and "risk: high" in blocker
    next_action = desk.section(markdown, "Next action")
    assert f"`tether approvals approve {approval}`" in next_action
    assert "not `case-agent`" in next_action
    assert "resumes the run at node `request_approval`" in next_action
    assert "if approved, the claim is approved and the case closed as decided" in next_action
    context = desk.section(markdown, "Context")
    assert "policy:household-claims@3" in context
    assert "answered by `olivia`" in context and "Loss adjuster report LA-5521" in context
    assert "`decision`: approve_claim" in context


def test_the_structured_handoff_matches_the_markdown(desk: CaseDesk) -> None:
    run_id = case_review_at_approval(desk)

    document = desk.app.runs.handoff_document(desk.operator, run_id)

    assert document.to_markdown() == desk.app.runs.handoff(desk.operator, run_id)
    assert document.input == {**document.input, "case_id": "C-1001"}
    assert document.blocker is not None and document.blocker.kind == "approval"
    assert document.blocker.wait_id == desk.app.runs.get(desk.operator, run_id).wait_id
    assert [node.node for node in document.completed][-1] == "create_case_note"
    assert document.completed[-1].next_node == "request_approval"
    assert document.model_dump(mode="json")["status"] == "waiting_for_approval"


def decided_case_review(desk: CaseDesk, *, approve: bool, comment: str) -> tuple[str, str]:
    """The case review run past its approval, decided as given; its run and approval ids."""
    run_id = case_review_at_approval(desk)
    approval = desk.app.runs.get(desk.operator, run_id).wait_id
    assert approval is not None
    desk.app.runs.decide(desk.approver, approval, approve=approve, comment=comment)
    desk.execute(case_workflow.registry, run_id)
    return run_id, approval


def test_a_completed_case_review(desk: CaseDesk) -> None:
    run_id, approval = decided_case_review(desk, approve=True, comment="report checked")
    assert desk.app.runs.get(desk.operator, run_id).status is RunStatus.COMPLETED
    keys = {
        entry.name: entry.idempotency_key
        for entry in desk.app.runs.journal(desk.operator, run_id)
        if entry.kind.value == "effect"
    }

    markdown = desk.app.runs.handoff(desk.operator, run_id)

    assert "**completed**" in markdown
    completed = desk.section(markdown, "Completed")
    assert re.findall(r"^\d+\. `([a-z_]+)`", completed, re.M)[-2:] == [
        "request_approval",
        "finalise",
    ]
    assert completed.index("create_case_note") < completed.index("finalise_case")
    assert f"effect `finalise_case` applied (key `{keys['finalise_case']}`)" in completed
    assert f"approval `{approval}` (approval_required) approved by `sam`" in completed
    assert "In progress" not in markdown
    assert desk.section(markdown, "Current blocker").strip() == "None."
    assert desk.section(markdown, "Next action").strip() == "1. Nothing: the run completed."
    context = desk.section(markdown, "Context")
    assert f"Approval `{approval}` (Approve claim C-1001) approved by `sam`" in context
    assert "report checked" in context
    assert "`outcome`: approved and finalised" in context


def test_a_rejected_case_review_takes_the_reject_path(desk: CaseDesk) -> None:
    run_id, approval = decided_case_review(desk, approve=False, comment="the report is unsigned")

    run = desk.app.runs.get(desk.operator, run_id)
    events = desk.app.runs.events(desk.operator, run_id)
    completed = [e.node for e in events if e.type == "node.completed"]
    assert run.status is RunStatus.COMPLETED
    assert completed[-2:] == ["request_approval", "record_rejection"]
    assert "finalise" not in completed
    assert "wait.rejected" in [e.type for e in events]
    effects = [
        e.name for e in desk.app.runs.journal(desk.operator, run_id) if e.kind.value == "effect"
    ]
    assert effects == ["create_case_note", "record_rejection"]
    assert desk.service.get_case("C-1001")["status"] == "open"
    assert desk.service.notes("C-1001")[-1] == (
        "Recommendation rejected by sam: the report is unsigned. "
        "The case stays open for manual handling."
    )
    state = desk.app.runs.state(desk.operator, run_id)
    assert state["outcome"] == "rejected by supervisor; left open for manual handling"
    context = desk.section(desk.app.runs.handoff(desk.operator, run_id), "Context")
    assert f"Approval `{approval}` (Approve claim C-1001) rejected by `sam`" in context


class Job(BaseModel):
    goal: str
    target: str


def failing_and_reviewed_workflows() -> WorkflowRegistry:
    failing: Workflow[Job] = Workflow("failing_job", state=Job)

    @failing.node(start=True)
    def prepare(ctx: RunContext, state: Job) -> str:
        ctx.effect("reserve", lambda key: {"reserved": state.target}, request={"t": state.target})
        return "explode"

    @failing.node(retry=RetryPolicy(max_attempts=1))
    def explode(ctx: RunContext, state: Job) -> str:
        raise RuntimeError(f"the export of {state.target} is corrupt")

    reviewed: Workflow[Job] = Workflow("reviewed_job", state=Job)

    @reviewed.node(start=True)
    def check(ctx: RunContext, state: Job) -> str:
        verdict = ctx.interrupt(
            InterruptReason.HUMAN_REVIEW,
            f"{state.target} looks unusual: check the figures before it is sent",
            payload={"target": state.target},
        )
        return END if verdict else "check"

    return WorkflowRegistry(failing, reviewed)


def start_job(desk: CaseDesk, registry: WorkflowRegistry, name: str, **state: Any) -> str:
    run = desk.app.runs.start(desk.agent, registry.get(name), Job(**state))
    desk.execute(registry, run.run_id)
    return run.run_id


def test_a_failed_run_names_the_error_and_what_it_already_did(desk: CaseDesk) -> None:
    registry = failing_and_reviewed_workflows()
    run_id = start_job(desk, registry, "failing_job", goal="Export Q3 ledger", target="ledger")
    assert desk.app.runs.get(desk.operator, run_id).status is RunStatus.FAILED

    markdown = desk.app.runs.handoff(desk.operator, run_id)

    assert "**failed** at node `explode`" in markdown
    assert desk.section(markdown, "Goal").strip() == "Export Q3 ledger"
    assert "effect `reserve` applied" in desk.section(markdown, "Completed")
    blocker = desk.section(markdown, "Current blocker")
    assert "The run failed:" in blocker and "the export of ledger is corrupt" in blocker
    next_action = desk.section(markdown, "Next action")
    assert f"`tether runs show {run_id}`" in next_action
    assert f"`tether runs retry {run_id} --reason <why>`" in next_action
    assert "not done again" in next_action


def test_a_run_in_human_review_names_the_question_and_how_to_answer(desk: CaseDesk) -> None:
    registry = failing_and_reviewed_workflows()
    run_id = start_job(desk, registry, "reviewed_job", goal="Send invoice 7", target="invoice-7")
    run = desk.app.runs.get(desk.operator, run_id)
    assert run.status is RunStatus.PAUSED and run.wait_id is not None

    markdown = desk.app.runs.handoff(desk.operator, run_id)

    assert "**paused** at node `check`" in markdown
    assert desk.section(markdown, "Completed").strip().startswith("No node has completed yet.")
    blocker = desk.section(markdown, "Current blocker")
    assert f"human_review `{run.wait_id}`" in blocker
    assert "invoice-7 looks unusual" in blocker
    next_action = desk.section(markdown, "Next action")
    assert f"`tether runs answer {run.wait_id} --answer JSON`" in next_action
    assert "resumes the run at node `check`" in next_action


def test_handoff_needs_a_role_and_an_existing_run_of_the_tenant(desk: CaseDesk) -> None:
    run_id = case_review_at_approval(desk)
    desk.app.tenants.create("globex", admin="gina")
    outsider = desk.app.tenants.principal("globex", "gina")
    nobody = Principal("acme", "nobody", frozenset())

    with pytest.raises(NotFound):
        desk.app.runs.handoff(outsider, run_id)
    with pytest.raises(PermissionDenied):
        desk.app.runs.handoff(nobody, run_id)


def test_the_cli_prints_the_handoff_as_markdown_or_json(
    desk: CaseDesk, backend: TestDatabase
) -> None:
    run_id = case_review_at_approval(desk)
    approval = desk.app.runs.get(desk.operator, run_id).wait_id
    env = {"TETHER_URL": backend.url, "TETHER_EMBEDDER": "none", "TETHER_TENANT": "acme"}
    runner = CliRunner()

    shown = runner.invoke(cli_app, ["runs", "handoff", run_id, "--as", "vic"], env=env)
    as_json = runner.invoke(cli_app, ["runs", "handoff", run_id, "--as", "vic", "--json"], env=env)
    missing = runner.invoke(
        cli_app, ["runs", "handoff", "01b8dac5-b400-74c6-98d1-e3c330a15d91", "--as", "vic"], env=env
    )

    assert shown.exit_code == 0, shown.output
    assert f"`tether approvals approve {approval}`" in shown.stdout
    assert as_json.exit_code == 0, as_json.output
    document = json.loads(as_json.stdout)
    assert document["blocker"]["wait_id"] == approval
    assert document["markdown"] == desk.app.runs.handoff(desk.viewer, run_id)
    assert missing.exit_code == 4
