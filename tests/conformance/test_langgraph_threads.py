"""LangGraph threads checkpointed by ``TetherSaver``, beyond the conformance suite, on
each backend: tenants are apart, a thread is a run (listed, interrupted into a Tether
approval, compacted by retention), and a growing message list is stored as what grew."""

from __future__ import annotations

import operator
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.integrations.langgraph import TetherSaver, request_approval, resume_command
from tether.principals import Principal
from tether.runs import RunStatus
from tether.storage.rows import AuditRow, GraphEvent, GraphRunUpdate, GraphThreadStart


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: int


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def chat_graph(saver: TetherSaver, steps: int) -> Any:
    def speak(state: Chat) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"message {n} " + "x" * 300, id=f"m{n}")]}

    def route(state: Chat) -> str:
        return END if len(state["messages"]) >= steps else "speak"

    builder = StateGraph(Chat)
    builder.add_node("speak", speak)
    builder.add_edge(START, "speak")
    builder.add_conditional_edges("speak", route)
    return builder.compile(checkpointer=saver)


def approval_graph(saver: TetherSaver) -> Any:
    def plan(state: Log) -> dict[str, Any]:
        return {"log": ["planned a refund of 120"]}

    def approve(state: Log) -> dict[str, Any]:
        decision = request_approval({"refund": 120}, rationale="damaged on delivery")
        return {"log": [f"{decision['status']} by {decision['decided_by']}"]}

    def pay(state: Log) -> dict[str, Any]:
        return {"log": ["paid"]}

    builder = StateGraph(Log)
    for name, node in (("plan", plan), ("approve", approve), ("pay", pay)):
        builder.add_node(name, node)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "approve")
    builder.add_edge("approve", "pay")
    builder.add_edge("pay", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def app(backend: TestDatabase, clock: FakeClock) -> Iterator[Tether]:
    with Tether.open(backend.settings(embedder="none"), clock=clock) as opened:
        yield opened


def cast(app: Tether, tenant: str) -> dict[str, Principal]:
    app.tenants.create(tenant, admin=f"{tenant}-admin")
    admin = app.tenants.principal(tenant, f"{tenant}-admin")
    for role in ("agent", "approver", "operator"):
        app.tenants.grant(admin, f"{tenant}-{role}", [role])
    return {"admin": admin} | {
        role: app.tenants.principal(tenant, f"{tenant}-{role}")
        for role in ("agent", "approver", "operator")
    }


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 500}


def messages(saver: TetherSaver, thread: str) -> list[AnyMessage]:
    """The thread's messages as a saver loads them."""
    latest = saver.get_tuple(config(thread))
    assert latest is not None
    return list(latest.checkpoint["channel_values"]["messages"])


def test_a_saver_sees_only_its_own_tenants_threads(app: Tether) -> None:
    acme, globex = cast(app, "acme"), cast(app, "globex")
    mine = TetherSaver(app, acme["operator"])
    theirs = TetherSaver(app, globex["operator"])
    chat_graph(mine, 3).invoke({"messages": [], "turns": 0}, config("shared-name"))

    assert theirs.get_tuple(config("shared-name")) is None
    assert list(theirs.list(config("shared-name"))) == []
    assert list(theirs.list(None)) == []
    theirs.delete_thread("shared-name")
    theirs.prune(["shared-name"])
    theirs.copy_thread("shared-name", "stolen")
    assert mine.get_tuple(config("stolen")) is None
    assert len(list(mine.list(config("shared-name")))) == 5
    assert app.runs.all(globex["admin"]) == []

    chat_graph(theirs, 2).invoke({"messages": [], "turns": 0}, config("shared-name"))
    mine_now = mine.get_tuple(config("shared-name"))
    assert mine_now is not None and len(mine_now.checkpoint["channel_values"]["messages"]) == 3


def test_a_thread_is_a_run_and_its_approval_is_decided_in_tether(app: Tether) -> None:
    acme = cast(app, "acme")
    saver = TetherSaver(app, acme["agent"])
    graph = approval_graph(saver)

    graph.invoke({"log": []}, config("claim-1"))
    run = app.graphs.thread_run(acme["agent"], "claim-1")
    assert run is not None
    assert (run.workflow, run.status) == ("langgraph", RunStatus.WAITING_FOR_APPROVAL)
    assert [r.run_id for r in app.runs.all(acme["admin"])] == [run.run_id]
    (wait,) = app.runs.waits(acme["approver"])
    assert (wait.run_id, wait.request["action"]) == (run.run_id, {"refund": 120})
    assert resume_command(saver, "claim-1") is None

    app.runs.decide(acme["approver"], wait.wait_id, approve=True, comment="fine")
    assert app.runs.get(acme["admin"], run.run_id).status is RunStatus.QUEUED
    command = resume_command(saver, "claim-1")
    assert command is not None
    final = graph.invoke(command, config("claim-1"))

    assert final["log"] == ["planned a refund of 120", "approved by acme-approver", "paid"]
    assert app.runs.get(acme["admin"], run.run_id).status is RunStatus.COMPLETED
    events = [e.type for e in app.runs.events(acme["admin"], run.run_id)]
    assert events == [
        "graph.thread_started",
        "graph.interrupted",
        "wait.approved",
        "graph.running",
        "graph.completed",
    ]


def test_a_growing_message_list_is_stored_as_what_grew(app: Tether, backend: TestDatabase) -> None:
    acme = cast(app, "acme")
    saver = TetherSaver(app, acme["operator"])
    chat_graph(saver, 60).invoke({"messages": [], "turns": 0}, config("long"))

    with backend.raw() as raw:
        ((blobs,),) = raw.execute(
            "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM graph_blobs WHERE thread_id = ?", ["long"]
        )
    assert int(blobs) < 1.5 * len(saver.serde.dumps_typed(messages(saver, "long"))[1])

    fresh = TetherSaver(app, acme["operator"])  # another process: nothing remembered
    history = list(fresh.list(config("long")))
    assert [len(t.checkpoint["channel_values"].get("messages", [])) for t in history[:3]] == [
        60,
        59,
        58,
    ]
    graph = chat_graph(fresh, 62)
    graph.invoke({"messages": [], "turns": 0}, config("long"))
    state = graph.get_state(config("long")).values
    assert [m.id for m in state["messages"]] == [f"m{n}" for n in range(62)]

    graph.update_state(
        config("long"), {"messages": [RemoveMessage(id=f"m{n}") for n in range(55, 62)]}
    )
    trimmed = TetherSaver(app, acme["operator"]).get_tuple(config("long"))
    assert trimmed is not None
    assert [m.id for m in trimmed.checkpoint["channel_values"]["messages"]] == [
        f"m{n}" for n in range(55)
    ]


def test_retention_compacts_a_finished_thread(app: Tether, clock: FakeClock) -> None:
    acme = cast(app, "acme")
    saver = TetherSaver(app, acme["operator"])
    chat_graph(saver, 8).invoke({"messages": [], "turns": 0}, config("old"))
    clock.advance(timedelta(days=40))
    chat_graph(saver, 3).invoke({"messages": [], "turns": 0}, config("new"))
    app.retention.set_policy(acme["admin"], "langgraph", 30)

    report = app.retention.gc(acme["operator"])

    assert report.compacted == 1
    assert len(list(saver.list(config("old")))) == 1
    assert len(list(saver.list(config("new")))) == 5
    assert len(messages(TetherSaver(app, acme["operator"]), "old")) == 8
    chat_graph(saver, 9).invoke({"messages": [], "turns": 0}, config("old"))
    assert len(messages(TetherSaver(app, acme["operator"]), "old")) == 9


def test_deleting_a_thread_keeps_its_run_and_cancels_it(app: Tether) -> None:
    acme = cast(app, "acme")
    saver = TetherSaver(app, acme["operator"])
    approval_graph(saver).invoke({"log": []}, config("claim-2"))
    run = app.graphs.thread_run(acme["operator"], "claim-2")
    assert run is not None

    saver.delete_thread("claim-2")

    assert saver.get_tuple(config("claim-2")) is None
    assert app.runs.get(acme["admin"], run.run_id).status is RunStatus.CANCELLED
    assert app.runs.waits(acme["approver"]) == []
    assert app.graphs.thread_run(acme["operator"], "claim-2") is None


def test_a_thread_has_one_run_and_one_audited_start_across_processes(
    app: Tether, backend: TestDatabase, clock: FakeClock
) -> None:
    acme = cast(app, "acme")
    chat_graph(TetherSaver(app, acme["agent"]), 2).invoke({"messages": [], "turns": 0}, config("t"))
    with Tether.open(backend.settings(embedder="none"), clock=clock) as other:
        later = TetherSaver(other, acme["agent"])
        chat_graph(later, 4).invoke({"messages": [], "turns": 0}, config("t"))
        assert len(messages(later, "t")) == 4

    runs = app.runs.all(acme["admin"])
    assert [run.status for run in runs] == [RunStatus.COMPLETED]
    started = app.audit.latest(acme["admin"], action="run.started")
    assert [entry.target for entry in started] == [f"run:{runs[0].run_id}"]
    assert started[0].actor_id == "acme-agent"
    assert app.audit.verify("acme").ok


def test_a_finish_from_a_stale_run_row_writes_nothing(app: Tether, clock: FakeClock) -> None:
    acme = cast(app, "acme")
    approval_graph(TetherSaver(app, acme["agent"])).invoke({"log": []}, config("claim-3"))
    run = app.graphs.thread_run(acme["operator"], "claim-3")
    assert run is not None and run.event_seq == 2
    update = GraphRunUpdate(
        run_id=run.run_id,
        status=RunStatus.COMPLETED.value,
        current_node="__end__",
        steps=3,
        wait_id=None,
        error=None,
        event_seq=2,
        updated_at=clock.now(),
        updated_by="acme-agent",
        expected_event_seq=1,
    )
    event = GraphEvent(run.run_id, 2, clock.now(), "graph.completed", "__end__", {})

    assert not app.storage.write_graph_finish("acme", update, event, [])

    assert app.runs.get(acme["admin"], run.run_id).status is RunStatus.WAITING_FOR_APPROVAL
    assert [e.type for e in app.runs.events(acme["admin"], run.run_id)][-1] == "graph.interrupted"


def test_a_checkpoint_read_as_its_thread_is_deleted_is_read_again(
    app: Tether, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The values a checkpoint stores apart are read after the checkpoint; when they are
    gone by then (the thread deleted in between), the whole read is done again, so the
    answer is the thread as it now is, never a checkpoint without its values."""
    acme = cast(app, "acme")
    saver = TetherSaver(app, acme["operator"])
    chat_graph(saver, 3).invoke({"messages": [], "turns": 0}, config("gone"))
    stale = app.storage.read_graph_checkpoint("acme", "gone", "", None)
    assert stale is not None and "messages" in stale[0].blob_channels
    saver.delete_thread("gone")
    monkeypatch.setattr(app.storage, "read_graph_checkpoint", lambda *args: stale)

    assert saver.get_tuple(config("gone")) is None


def test_two_processes_starting_one_thread_at_once_make_one_run(
    app: Tether, backend: TestDatabase, clock: FakeClock
) -> None:
    """The second writer reads the thread only once it holds the tenant's audit head, so
    it finds the first writer's thread and writes nothing, instead of failing on the
    thread's key."""
    acme = cast(app, "acme")
    results: dict[str, tuple[object, str]] = {}
    holding = threading.Event()

    def start(name: str, opened: Tether, hold: bool) -> None:
        run_id = str(uuid.uuid4())
        begin = GraphThreadStart(
            "t-race", run_id, "running", "acme-agent", clock.now(), "graph.thread_started"
        )

        def entry(seq: int, head: str) -> AuditRow:
            if hold:  # keep the head locked while the other writer arrives
                holding.set()
                time.sleep(0.5)
            return opened.audit.next_entry(
                "acme", seq, head, actor_id="acme-agent", action="run.started", target=run_id
            )

        try:
            results[name] = (opened.storage.write_graph_start("acme", begin, entry, []), run_id)
        except Exception as exc:  # the assertion below shows it
            results[name] = (repr(exc), run_id)

    with Tether.open(backend.settings(embedder="none"), clock=clock) as other:
        first = threading.Thread(target=start, args=("first", app, True))
        first.start()
        assert holding.wait(10)
        second = threading.Thread(target=start, args=("second", other, False))
        second.start()
        first.join()
        second.join()

    assert [results["first"][0], results["second"][0]] == [True, False], results
    assert [run.run_id for run in app.runs.all(acme["admin"])] == [results["first"][1]]
    assert app.audit.verify("acme").ok
