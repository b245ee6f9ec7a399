"""A soak of mixed writes at once in one tenant, from two applications on one database
(as two processes would be), on each backend: run starts and a worker executing them,
operator cancellations, role grants, memory proposals and forgets, recalls with their
log flushed, thread turns, LangGraph chains, housekeeping passes and retention's gc.

Every operation must succeed (a cancellation of a run that already finished, a forget of a
memory already forgotten and a housekeeping pass another thread is running are the
expected refusals); the audit chain verifies at the end. It found two deadlocks on
PostgreSQL (the audit head locked ``FOR UPDATE`` against the foreign keys' key-share
locks; access counts written in the order of each flush's hits). ``make test-long``.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import Tether
from tether.errors import Conflict
from tether.integrations.langgraph import TetherSaver
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.runs import END, WorkflowRegistry
from tether.runs import Workflow as RunWorkflow
from tether.threads.models import NewTurn

pytestmark = pytest.mark.slow

SECONDS = 20.0


class Count(BaseModel):
    n: int = 0


def _step(next_node: str) -> Callable[[Any, Count], str]:
    def node(ctx: Any, state: Count) -> str:
        state.n += 1
        return next_node

    return node


def _chain() -> RunWorkflow[Count]:
    workflow = RunWorkflow("soak", state=Count)
    names = [f"step{i}" for i in range(5)]
    for index, name in enumerate(names):
        workflow.node(_step(names[index + 1] if index + 1 < len(names) else END), name=name)
    return workflow


def _graph(saver: TetherSaver) -> Any:
    from typing import TypedDict

    from langgraph.graph import END as GRAPH_END
    from langgraph.graph import START, StateGraph

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    builder.add_node("one", lambda state: {"n": state["n"] + 1})
    builder.add_node("two", lambda state: {"n": state["n"] + 1})
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", GRAPH_END)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def apps(backend: TestDatabase) -> Iterator[list[Tether]]:
    first = backend.open(embedder="none")
    second = backend.open(embedder="none")
    try:
        yield [first, second]
    finally:
        second.close()
        first.close()


def test_mixed_writes_of_two_applications_for_twenty_seconds(apps: list[Tether]) -> None:
    app, other = apps
    app.tenants.create("acme", admin="admin")
    admin = app.tenants.principal("acme", "admin")
    app.tenants.grant(admin, "agent", ["agent"])
    app.tenants.grant(admin, "op", ["operator"])
    agent = app.tenants.principal("acme", "agent")
    operator = app.tenants.principal("acme", "op")
    workflow = _chain()
    executor = app.executor(WorkflowRegistry(workflow))
    graph = _graph(TetherSaver(other, agent))
    thread = app.threads.create(agent, "u1")
    stop = time.monotonic() + SECONDS
    errors: list[str] = []
    done: Counter[str] = Counter()
    started: list[str] = []
    remembered: list[str] = []

    def attempt(name: str, action: Callable[..., object], *args: Any, expected: str = "") -> None:
        try:
            action(*args)
            done[name] += 1
        except Conflict as exc:
            if not expected or expected not in str(exc):
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
        except Exception as exc:
            errors.append(f"{name}: {type(exc).__name__}: {exc}")

    def cancel(run_id: str) -> None:
        other.runbook.cancel(operator, run_id, reason="soak: not needed")

    def start(owner: Tether) -> None:
        started.append(owner.runs.start(agent, workflow, Count()).run_id)

    def propose(proposal: MemoryProposal) -> None:
        decision = other.memory.propose(agent, proposal)
        if decision.memory_id:
            remembered.append(decision.memory_id)

    def invoke(config: dict[str, Any]) -> None:
        graph.invoke({"n": 0}, config, durability="sync")

    def housekeep(owner: Tether) -> None:
        owner.housekeeping.run(admin, owner=f"soak-{threading.get_ident()}")

    def starts() -> None:
        while time.monotonic() < stop:
            owner = random.choice(apps)
            attempt("start", start, owner)

    def execute() -> None:
        while time.monotonic() < stop:
            if started:
                run_id = random.choice(started[-20:])
                attempt("execute", executor.execute, "acme", run_id)
            else:
                time.sleep(0.01)

    def cancels() -> None:
        while time.monotonic() < stop:
            if started:
                run_id = random.choice(started[-20:])
                attempt("cancel", cancel, run_id, expected="already")
            time.sleep(0.01)

    def grants() -> None:
        number = 0
        while time.monotonic() < stop:
            number += 1
            attempt("grant", app.tenants.grant, admin, f"reader-{number % 7}", ["viewer"])
            time.sleep(0.01)

    def memories() -> None:
        number = 0
        while time.monotonic() < stop:
            number += 1
            proposal = MemoryProposal(
                text=f"likes tea with breakfast, note {number}",
                scope=Scope.USER,
                scope_id="u1",
                subjects=["u1"],
                source_type=SourceType.USER_MESSAGE,
            )

            attempt("propose", propose, proposal)
            if remembered and number % 3 == 0:
                memory_id = remembered.pop(0)
                attempt("forget", app.memory.forget, admin, memory_id, expected="already")

    def recalls() -> None:
        while time.monotonic() < stop:
            owner = random.choice(apps)
            attempt("recall", owner.memory.recall, agent, "tea", [(Scope.USER, "u1")])
            attempt("flush", owner.memory.flush_access)

    def turns() -> None:
        while time.monotonic() < stop:
            turn = NewTurn(role="user", content="hello there")
            attempt("turn", app.threads.append, agent, thread.thread_id, turn)

    def graphs() -> None:
        while time.monotonic() < stop:
            config = {"configurable": {"thread_id": str(uuid.uuid4())}}
            attempt("graph", invoke, config)

    def housekeeping() -> None:
        while time.monotonic() < stop:
            owner = random.choice(apps)
            attempt("housekeeping", housekeep, owner, expected="running elsewhere")
            attempt("gc", owner.retention.gc, admin)
            time.sleep(0.05)

    jobs = [starts, starts, execute, cancels, grants, memories, recalls, turns, graphs]
    jobs += [graphs, housekeeping, housekeeping]
    threads = [threading.Thread(target=job) for job in jobs]
    for worker in threads:
        worker.start()
    for worker in threads:
        worker.join(timeout=SECONDS + 120)
    print(f"\n{dict(done)}")
    assert not any(worker.is_alive() for worker in threads)
    assert errors == []
    for kind in ("start", "execute", "grant", "propose", "recall", "turn", "graph", "gc"):
        assert done[kind] > 0, kind
    assert app.audit.verify("acme").ok
