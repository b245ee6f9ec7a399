"""Checkpoint storage grows with what changed, not with the whole state at every step."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, Harness, open_harness
from tests.support import TestDatabase
from tether import canonical
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry

STEPS = 1000
ITEM_BYTES = 700


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


class ToolLog(BaseModel):
    count: int = 0
    outputs: list[dict[str, str | int]] = []


def tool_output(number: int) -> dict[str, str | int]:
    text = f"tool output {number}: " + "lorem ipsum dolor sit amet " * 30
    return {"n": number, "text": text[:ITEM_BYTES]}


def test_a_thousand_step_run_stores_its_state_in_bounded_space(h: Harness) -> None:
    wf: Workflow[ToolLog] = Workflow("tool_loop", state=ToolLog, max_steps=STEPS + 10)

    @wf.node
    def call_tool(ctx: RunContext, s: ToolLog) -> str:
        s.count += 1
        s.outputs.append(tool_output(s.count))
        return "call_tool" if s.count < STEPS else END

    run = h.app.runs.start(h.agent, wf, ToolLog())

    done = h.executor(WorkflowRegistry(wf), "worker-1").execute(TENANT, run.run_id)

    assert done.status is RunStatus.COMPLETED, done.error
    assert done.steps == STEPS
    expected = ToolLog(count=STEPS, outputs=[tool_output(n) for n in range(1, STEPS + 1)])
    expected_json = expected.model_dump(mode="json")
    final_size = len(canonical.dumps(expected_json))
    assert final_size > STEPS * ITEM_BYTES

    checkpoints = h.checkpoints(run.run_id)
    assert [c.seq for c in checkpoints] == list(range(STEPS + 1))
    stored = sum(len(c.payload) for c in checkpoints)
    assert stored <= 3 * final_size, f"{stored} bytes stored for a {final_size}-byte state"
    assert any(c.kind == "delta" for c in checkpoints)
    assert h.state(run.run_id) == expected_json


class Mixed(BaseModel):
    anything: Any = 1
    flag: int | bool = 1
    off: Any = 0
    items: list[Any] = [1, 2]
    nested: dict[str, Any] = {"score": 1}


def test_a_value_that_changes_json_type_survives_the_checkpoint(h: Harness) -> None:
    """1 -> True, 0 -> False, 1 -> 1.0 compare equal in Python but not in JSON: the stored
    state must still say what the node wrote."""
    wf: Workflow[Mixed] = Workflow("mixed", state=Mixed)

    @wf.node(start=True)
    def change(ctx: RunContext, s: Mixed) -> str:
        s.anything = 1.0
        s.flag = True
        s.off = False
        s.items = [True, 2, 3]
        s.nested = {"score": 1.5 - 0.5}
        return "ask"

    @wf.node
    def ask(ctx: RunContext, s: Mixed) -> str:
        ctx.interrupt("clarification_required", "anything else?")
        return END

    run = h.app.runs.start(h.agent, wf, Mixed())
    parked = h.executor(WorkflowRegistry(wf), "worker-1").execute(TENANT, run.run_id)
    assert parked.status is RunStatus.WAITING_FOR_USER

    expected = Mixed(anything=1.0, flag=True, off=False, items=[True, 2, 3], nested={"score": 1.0})
    stored = h.state(run.run_id)
    assert canonical.dumps(stored) == canonical.dumps(expected.model_dump(mode="json"))
