"""A five-step chain for the worker command's end-to-end test."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from tether.runs import END, RunContext, Workflow, WorkflowRegistry


class Count(BaseModel):
    n: int = 0


chain: Workflow[Count] = Workflow("five_steps", state=Count)


def _step(next_node: str) -> Callable[[RunContext, Count], str]:
    def node(ctx: RunContext, state: Count) -> str:
        state.n += 1
        return next_node

    return node


for _index in range(5):
    chain.node(_step(f"s{_index + 1}" if _index < 4 else END), name=f"s{_index}")

registry = WorkflowRegistry(chain)
