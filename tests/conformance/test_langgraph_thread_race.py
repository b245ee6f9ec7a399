"""Two processes creating one LangGraph thread at once, on each backend: whichever way the
thread is created (a checkpoint, a task's failed writes before any checkpoint, a copy),
the thread gets one run and one ``run.started`` entry, the second writer finds the first
one's thread and stores what it wrote, and the audit chain verifies."""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph

from tests.support import TestDatabase
from tether import Tether
from tether.config import load_settings
from tether.integrations.langgraph import TetherSaver
from tether.principals import Principal
from tether.runs import RunStatus

HOLD = 0.5
"""How long the first writer keeps its transaction open once it has started the thread,
so the second writer arrives while it is open."""
THREADS = 15
"""New threads two processes invoke at once."""


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    with backend.open(embedder="none") as opened:
        yield opened


@pytest.fixture
def agent(app: Tether) -> Principal:
    app.tenants.create("acme", admin="acme-admin")
    admin = app.tenants.principal("acme", "acme-admin")
    app.tenants.grant(admin, "acme-agent", ["agent"])
    return app.tenants.principal("acme", "acme-agent")


def config(thread: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def checkpoint_once(saver: TetherSaver, thread: str) -> None:
    """A finished checkpoint (no node left to run): written through the transaction that
    creates the thread's run row without reading the thread first."""
    saver.put(config(thread), empty_checkpoint(), {"source": "input", "step": -1}, {})


def fail_once(saver: TetherSaver, thread: str) -> None:
    """A task's failure against a checkpoint not stored yet: its writes create the run.
    Each writer's task is its own, so neither waits on the other's writes."""
    task = str(uuid.uuid4())
    saver.put_writes(config(thread, "c-missing"), [("__error__", ValueError("boom"))], task)


def copy_once(saver: TetherSaver, thread: str) -> None:
    saver.copy_thread("source", thread)


def race(app: Tether, other: Tether, agent: Principal, write: Callable[..., None]) -> None:
    """``write`` by ``app`` and ``other`` at once on thread ``t-race``: ``app`` is held in
    its transaction right after it started the thread, and ``other`` writes meanwhile."""
    errors: dict[str, BaseException] = {}
    holding = threading.Event()
    record = app.audit.record_txn

    def held(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("action") == "run.started" and not holding.is_set():
            holding.set()
            time.sleep(HOLD)  # keep the thread uncommitted while the other writer arrives
        return record(*args, **kwargs)

    def run(name: str, opened: Tether) -> None:
        try:
            write(TetherSaver(opened, agent), "t-race")
        except Exception as exc:  # the assertion below shows it
            errors[name] = exc

    app.audit.record_txn = held  # type: ignore[method-assign]
    try:
        first = threading.Thread(target=run, args=("first", app))
        first.start()
        assert holding.wait(10)
        second = threading.Thread(target=run, args=("second", other))
        second.start()
        first.join()
        second.join()
    finally:
        del app.audit.record_txn
    assert errors == {}


@pytest.mark.parametrize("write", [checkpoint_once, fail_once, copy_once])
def test_two_processes_creating_one_thread_at_once_make_one_run(
    app: Tether, backend: TestDatabase, agent: Principal, write: Any
) -> None:
    saver = TetherSaver(app, agent)
    if write is copy_once:
        checkpoint_once(saver, "source")
    with backend.open(embedder="none") as other:
        race(app, other, agent, write)

    admin = app.tenants.principal("acme", "acme-admin")
    thread = app.graphs.thread_run(admin, "t-race")
    assert thread is not None
    source = app.graphs.thread_run(admin, "source")
    assert sorted(run.run_id for run in app.runs.all(admin)) == sorted(
        [thread.run_id] + ([source.run_id] if source else [])
    )
    started = [e.target for e in app.audit.entries(admin) if e.action == "run.started"]
    assert started.count(f"run:{thread.run_id}") == 1
    assert len(started) == (2 if source else 1)
    assert app.audit.verify("acme").ok
    if write is checkpoint_once:
        assert len(list(saver.list(config("t-race")))) == 2  # both writers' checkpoints
    if write is fail_once:
        assert thread.status is RunStatus.FAILED
    if write is copy_once:
        assert len(list(saver.list(config("t-race")))) == 1


class Count(TypedDict):
    count: int


def count_graph(saver: TetherSaver) -> Any:
    def add(state: Count) -> dict[str, Any]:
        return {"count": state["count"] + 1}

    builder = StateGraph(Count)
    builder.add_node("first", add)
    builder.add_node("second", add)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile(checkpointer=saver)


def invoke_each(url: str, threads: list[str], together: Any, failures: Any) -> None:
    """In a process of its own: invoke a small graph on each of ``threads``, each started
    together with the other process (``together``, a barrier), checkpointed at every step
    or only when it finishes; what raised goes to ``failures``."""
    with Tether.open(load_settings(url=url, embedder="none")) as app:
        graph = count_graph(TetherSaver(app, app.tenants.principal("acme", "acme-agent")))
        for n, thread in enumerate(threads):
            together.wait(30)
            try:
                # "exit": only the finished checkpoint is written, and it starts the thread.
                durability = "exit" if n % 2 else "async"
                config = {"configurable": {"thread_id": thread}}
                graph.invoke({"count": 0}, config, durability=durability)
            except Exception as exc:  # the parent reports it
                failures.put(f"{thread}: {exc!r}")


def test_two_processes_invoking_the_same_new_threads_make_one_run_each(
    app: Tether, backend: TestDatabase, agent: Principal
) -> None:
    threads = [f"t-{uuid.uuid4()}" for _ in range(THREADS)]
    spawn = multiprocessing.get_context("spawn")
    together, failures = spawn.Barrier(2), spawn.Queue()
    processes = [
        spawn.Process(target=invoke_each, args=(backend.url, threads, together, failures))
        for _ in range(2)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
    found = []
    while not failures.empty():
        found.append(failures.get())
    assert found == []
    assert [process.exitcode for process in processes] == [0, 0]

    admin = app.tenants.principal("acme", "acme-admin")
    runs = {run.run_id for run in app.runs.all(admin)}
    thread_runs = [app.graphs.thread_run(admin, thread) for thread in threads]
    assert len(runs) == THREADS
    assert {run.run_id for run in thread_runs if run is not None} == runs
    started = [e for e in app.audit.entries(admin, limit=1000) if e.action == "run.started"]
    assert len(started) == THREADS
    assert app.audit.verify("acme").ok
    graph = count_graph(TetherSaver(app, agent))
    counts = {graph.get_state({"configurable": {"thread_id": t}}).values["count"] for t in threads}
    assert counts == {2}
