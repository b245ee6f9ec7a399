"""Workflow versions: a run stays on the version it started with; changed code is caught."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, CaseService, Harness, open_harness, open_wait
from tests.support import TestDatabase
from tether.errors import NotFound
from tether.runs import (
    END,
    InterruptReason,
    RunContext,
    RunStatus,
    Workflow,
    WorkflowRegistry,
)


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class LetterState(BaseModel):
    trail: list[str] = []
    sent: dict[str, Any] | None = None


def letter_workflow(version: int, service: CaseService) -> Workflow[LetterState]:
    """Prepare, get approval, send; every node leaves its version in ``trail``."""
    wf: Workflow[LetterState] = Workflow("letter", state=LetterState, version=version)
    tag = f"v{version}"

    @wf.node(start=True)
    def prepare(ctx: RunContext, s: LetterState) -> str:
        s.trail.append(f"prepare {tag}")
        return "approve"

    @wf.node
    def approve(ctx: RunContext, s: LetterState) -> str:
        ctx.approval({"letter": "decision"}, rationale="send the decision letter")
        s.trail.append(f"approve {tag}")
        return "send"

    @wf.node
    def send(ctx: RunContext, s: LetterState) -> str:
        s.trail.append(f"send {tag}")
        s.sent = ctx.effect(
            f"send_letter_{tag}",
            lambda key: service.call(key, f"send_letter_{tag}", {}),
            request={"letter": "decision"},
        )
        return END

    return wf


def test_a_waiting_run_finishes_on_its_version_after_a_deploy(h: Harness) -> None:
    service = CaseService()
    v1 = letter_workflow(1, service)
    old_process = WorkflowRegistry(v1)
    run = h.app.runs.start(h.agent, v1, LetterState())
    waiting = h.executor(old_process, "worker-old").execute(TENANT, run.run_id)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL

    new_process = WorkflowRegistry(letter_workflow(1, service), letter_workflow(2, service))
    assert new_process.get("letter").version == 2
    h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=True)
    finished = h.executor(new_process, "worker-new").execute(TENANT, run.run_id)

    assert finished.status is RunStatus.COMPLETED
    assert finished.workflow_version == 1
    assert h.state(run.run_id)["trail"] == ["prepare v1", "approve v1", "send v1"]
    assert [key.rsplit(":", 1)[-1] for key in service.calls] == ["send_letter_v1"]

    fresh = h.app.runs.start(h.agent, new_process.get("letter"), LetterState())
    assert fresh.workflow_version == 2


def test_a_process_without_the_runs_version_does_not_touch_it(h: Harness) -> None:
    service = CaseService()
    v1 = letter_workflow(1, service)
    run = h.app.runs.start(h.agent, v1, LetterState())
    waiting = h.executor(WorkflowRegistry(v1), "worker-old").execute(TENANT, run.run_id)
    h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=True)
    before = h.snapshot(run.run_id)

    v2_only = h.executor(WorkflowRegistry(letter_workflow(2, service)), "worker-new")
    assert v2_only.execute_next() is None
    with pytest.raises(NotFound, match="letter@1 is not registered"):
        v2_only.execute(TENANT, run.run_id)

    assert h.snapshot(run.run_id) == before
    assert service.calls == {}


class NoticeState(BaseModel):
    sent: dict[str, Any] | None = None


def notice_workflow(effect_name: str, service: CaseService) -> Workflow[NoticeState]:
    """Sends a notice, then asks for approval: the effect is journaled before the wait."""
    wf: Workflow[NoticeState] = Workflow("notice", state=NoticeState, version=1)

    @wf.node
    def notify(ctx: RunContext, s: NoticeState) -> str:
        s.sent = ctx.effect(
            effect_name,
            lambda key: service.call(key, effect_name, {}),
            request={"notice": "claim received"},
        )
        ctx.approval({"close": True}, rationale="close the claim")
        return END

    return wf


def test_a_changed_effect_name_under_the_same_version_stops_the_run(h: Harness) -> None:
    service = CaseService()
    original = notice_workflow("send_letter", service)
    run = h.app.runs.start(h.agent, original, NoticeState())
    waiting = h.executor(WorkflowRegistry(original), "worker-old").execute(TENANT, run.run_id)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    assert list(service.calls.values()) == [1]
    h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=True)

    changed = WorkflowRegistry(notice_workflow("send_email", service))
    after = h.executor(changed, "worker-new").execute(TENANT, run.run_id)

    assert after.status is RunStatus.PAUSED
    review = open_wait(h, after)
    assert review.reason is InterruptReason.HUMAN_REVIEW
    assert "'send_letter'" in review.message
    assert "'send_email'" in review.message
    events = [e for e in h.events(run.run_id) if e.type == "workflow.changed"]
    assert len(events) == 1
    assert "'send_letter'" in events[0].data["message"]
    assert "'send_email'" in events[0].data["message"]
    assert [key.rsplit(":", 1)[-1] for key in service.calls] == ["send_letter"]
    assert list(service.calls.values()) == [1]
