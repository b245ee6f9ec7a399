"""The run inbox: input sent to a running run, read through the context, journaled like a
step so that a replay after a crash receives the same messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import PAST_LEASE, TENANT, Crash, Harness, open_harness
from tests.support import TestDatabase
from tether.errors import Conflict, InvalidInput, PermissionDenied
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class Chat(BaseModel):
    first: list[Any] = []
    later: list[Any] = []
    last: list[Any] = []


def chat_workflow(acks: list[str], crash: list[bool]) -> Workflow[Chat]:
    wf: Workflow[Chat] = Workflow("chat", state=Chat)

    @wf.node(start=True)
    def listen(ctx: RunContext, s: Chat) -> str:
        s.first = [m.message for m in ctx.receive()]
        ctx.effect("ack", lambda key: acks.append(key) or key)
        if crash:
            crash.pop()
            raise Crash("killed after the effect")
        s.later = [m.message for m in ctx.receive()]
        return "wrap_up"

    @wf.node
    def wrap_up(ctx: RunContext, s: Chat) -> str:
        s.last = [m.message for m in ctx.receive()]
        return END

    return wf


def test_a_replay_after_a_crash_receives_the_same_messages(h: Harness) -> None:
    acks: list[str] = []
    wf = chat_workflow(acks, crash=[True])
    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, Chat())
    sent = h.app.inbox.send(h.agent, run.run_id, {"text": "also check the invoice"})
    assert sent.seq == 1

    with pytest.raises(Crash):
        h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    h.app.inbox.send(h.operator, run.run_id, "and the receipt")
    h.clock.advance(PAST_LEASE)
    done = h.executor(registry, "worker-2").execute(TENANT, run.run_id)

    assert done.status is RunStatus.COMPLETED, done.error
    assert h.state(run.run_id) == {
        "first": [{"text": "also check the invoice"}],
        "later": ["and the receipt"],
        "last": [],
    }
    assert len(acks) == 1
    reads = [e for e in h.journal(run.run_id) if e.name == "tether.inbox"]
    assert len(reads) == 3
    assert [m.seq for m in h.app.inbox.messages(h.viewer, run.run_id)] == [1, 2]
    actions = [e.action for e in h.app.audit.entries(h.admin, limit=100)]
    assert actions.count("run.message_sent") == 2
    with pytest.raises(Conflict, match="finished run"):
        h.app.inbox.send(h.agent, run.run_id, "too late")


def test_a_message_sent_while_the_run_waits_is_read_when_it_resumes(h: Harness) -> None:
    wf: Workflow[Chat] = Workflow("asker", state=Chat)

    @wf.node(start=True)
    def ask(ctx: RunContext, s: Chat) -> str:
        s.first = [ctx.interrupt("clarification_required", "which account?")]
        s.later = [m.message for m in ctx.receive()]
        return END

    registry = WorkflowRegistry(wf)
    run = h.app.runs.start(h.agent, wf, Chat())
    waiting = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    assert waiting.status is RunStatus.WAITING_FOR_USER
    h.app.inbox.send(h.agent, run.run_id, {"note": "urgent"})
    assert waiting.wait_id is not None
    h.app.runs.answer(h.operator, waiting.wait_id, "acct-7")
    done = h.executor(registry, "worker-1").execute(TENANT, run.run_id)
    assert h.state(run.run_id)["later"] == [{"note": "urgent"}], done.error


def test_send_is_refused_without_the_role_or_a_run(h: Harness) -> None:
    run = h.app.runs.start(h.agent, chat_workflow([], []), Chat())
    with pytest.raises(PermissionDenied):
        h.app.inbox.send(h.viewer, run.run_id, "hi")
    with pytest.raises(InvalidInput):
        h.app.inbox.send(h.agent, "not-a-run", "hi")
    with pytest.raises(InvalidInput, match="bytes"):
        h.app.inbox.send(h.agent, run.run_id, "x" * 70_000)
    assert h.app.inbox.messages(h.viewer, run.run_id) == []
