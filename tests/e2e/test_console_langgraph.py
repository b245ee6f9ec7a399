"""A LangGraph thread in the operator console and over HTTP, on each backend: its run is
listed as a LangGraph thread beside an ordinary run, and its page shows the thread's
checkpoints (step, source, changed channels, pending writes, the interrupt that stopped it
with its wait); markup stored in a thread id, a node name or a question is shown as text;
``GET /runs/{id}/graph-checkpoints`` answers the same, a page at a time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypedDict

import pytest
from fastapi.testclient import TestClient
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from markupsafe import escape
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.integrations.langgraph import TetherSaver, resume_command
from tether.principals import Principal
from tether.runs import END as RUN_END
from tether.runs import RunContext, Workflow, WorkflowRegistry
from tether.server import create_app

HOSTILE_THREAD = '<script>window.pwned = "thread"</script>'
HOSTILE_NODE = "<b>ask</b>"
HOSTILE_QUESTION = '<img src=x onerror="window.pwned = 1"> ship it?'
CONFIG: Any = {"configurable": {"thread_id": HOSTILE_THREAD}}


class Order(TypedDict):
    items: list[str]
    shipped: bool


def order_graph(saver: TetherSaver) -> Any:
    """plan -> ask (interrupts with a question) -> ship."""

    def plan(state: Order) -> dict[str, Any]:
        return {"items": ["a lamp", "a desk"]}

    def ask(state: Order) -> dict[str, Any]:
        answer = interrupt(HOSTILE_QUESTION)
        return {"shipped": answer == "yes"}

    def ship(state: Order) -> dict[str, Any]:
        return {}

    builder = StateGraph(Order)
    builder.add_node("plan", plan)
    builder.add_node(HOSTILE_NODE, ask)
    builder.add_node("ship", ship)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", HOSTILE_NODE)
    builder.add_edge(HOSTILE_NODE, "ship")
    builder.add_edge("ship", END)
    return builder.compile(checkpointer=saver)


class Note(BaseModel):
    text: str = ""


def note_workflow() -> Workflow[Note]:
    wf: Workflow[Note] = Workflow("note", state=Note)

    @wf.node(start=True)
    def write(ctx: RunContext, s: Note) -> str:
        s.text = "written"
        return RUN_END

    return wf


@dataclass
class Console:
    client: TestClient
    key: str
    graph_run: str
    plain_run: str
    app: Tether
    agent: Principal
    saver: TetherSaver

    def api(self, path: str, **params: Any) -> Any:
        response = self.client.get(
            f"/api/v1{path}", params=params, headers={"Authorization": f"Bearer {self.key}"}
        )
        return response


@pytest.fixture
def console(backend: TestDatabase) -> Iterator[Console]:
    """acme with a viewer (logged into the console), a LangGraph thread stopped at its
    interrupt and an ordinary run that completed."""
    registry = WorkflowRegistry(note_workflow())
    with Tether.open(backend.settings(embedder="none"), clock=FakeClock()) as app:
        app.tenants.create("acme", admin="ann")
        ann = app.tenants.principal("acme", "ann")
        app.tenants.grant(ann, "agent", ["agent"])
        app.tenants.grant(ann, "vic", ["viewer"])
        agent = app.tenants.principal("acme", "agent")
        saver = TetherSaver(app, agent)
        order_graph(saver).invoke({"items": [], "shipped": False}, CONFIG)
        run = app.graphs.thread_run(agent, HOSTILE_THREAD)
        assert run is not None
        plain = app.runs.start(agent, registry.get("note", 1), Note()).run_id
        app.executor(registry, owner="test").execute("acme", plain)
        key = app.api_keys.create(ann, "vic").secret
        client = TestClient(create_app(app, workflows=registry))
        _log_in(client, key)
        yield Console(client, key, run.run_id, plain, app, agent, saver)


def _log_in(client: TestClient, key: str) -> None:
    form = client.get("/console/login")
    token = re.search(r'name="csrf" value="([0-9a-f]{64})"', form.text)
    assert token is not None
    entered = client.post(
        "/console/login", data={"api_key": key, "csrf": token.group(1)}, follow_redirects=False
    )
    assert entered.status_code == 303


def _row(page: str, run_id: str) -> str:
    found = re.search(rf'<tr data-run="{run_id}">(.*?)</tr>', page, re.S)
    assert found, page
    return found.group(1)


def _checkpoint_rows(page: str) -> list[dict[str, str]]:
    rows = re.findall(
        r'<tr class="graph-checkpoint" id="[^"]*" data-step="([^"]*)" data-source="([^"]*)">'
        r"(.*?)</tr>",
        page,
        re.S,
    )
    return [
        {
            "step": step,
            "source": source,
            "changed": _cell(body, "changed"),
            "pending": _cell(body, "pending"),
            "interrupts": _cell(body, "interrupts"),
        }
        for step, source, body in rows
    ]


def _cell(body: str, name: str) -> str:
    found = re.search(rf'<td class="{name}">(.*?)</td>', body, re.S)
    assert found, body
    return found.group(1)


def test_the_run_list_labels_a_langgraph_thread_and_keeps_ordinary_runs(console: Console) -> None:
    page = console.client.get("/console/runs")
    assert page.status_code == 200

    assert "LangGraph thread" in _row(page.text, console.graph_run)
    assert "waiting_for_user" in _row(page.text, console.graph_run)
    plain = _row(page.text, console.plain_run)
    assert "note@1" in plain and "LangGraph" not in plain


def test_a_thread_page_shows_its_checkpoints_up_to_the_interrupt(console: Console) -> None:
    page = console.client.get(f"/console/runs/{console.graph_run}")
    assert page.status_code == 200
    text = page.text

    rows = _checkpoint_rows(text)
    assert [(r["step"], r["source"]) for r in rows] == [
        ("-1", "input"),
        ("0", "loop"),
        ("1", "loop"),
    ]
    assert "<code>__start__</code>" in rows[0]["changed"]
    assert "<code>items</code>" in rows[1]["changed"]
    assert "<code>plan</code> → <code>items</code>" in rows[1]["pending"]
    assert "<code>__interrupt__</code>" in rows[2]["pending"]
    assert rows[0]["interrupts"] == rows[1]["interrupts"] == ""
    interrupt_cell = rows[2]["interrupts"]
    assert "status-open" in interrupt_cell and "interrupt at" in interrupt_cell
    assert 'id="checkpoints"' not in text  # a LangGraph run has no Tether checkpoints


def test_markup_stored_by_a_graph_is_shown_as_text(console: Console) -> None:
    text = console.client.get(f"/console/runs/{console.graph_run}").text

    for stored in (HOSTILE_THREAD, HOSTILE_NODE, HOSTILE_QUESTION):
        assert stored not in text
    assert escape(HOSTILE_THREAD) in text
    assert f"<code>{escape(HOSTILE_NODE)}</code>" in _checkpoint_rows(text)[2]["pending"]
    assert escape(HOSTILE_QUESTION) in _checkpoint_rows(text)[2]["interrupts"]


def test_an_ordinary_run_page_is_unchanged(console: Console) -> None:
    text = console.client.get(f"/console/runs/{console.plain_run}").text

    assert 'id="checkpoints"' in text and 'id="graph-checkpoints"' not in text
    assert "note@1" in text and "of at most" in text
    assert "&#34;text&#34;: &#34;written&#34;" in text  # the state, as JSON


def test_the_http_timeline_answers_the_same_a_page_at_a_time(console: Console) -> None:
    first = console.api(f"/runs/{console.graph_run}/graph-checkpoints", limit=2)
    assert first.status_code == 200, first.text
    body = first.json()
    assert [(c["step"], c["source"]) for c in body["items"]] == [(-1, "input"), (0, "loop")]
    assert body["items"][1]["pending_writes"][0]["node"] == "plan"
    rest = console.api(
        f"/runs/{console.graph_run}/graph-checkpoints", cursor=body["next_cursor"]
    ).json()
    (last,) = rest["items"]
    assert rest["next_cursor"] is None
    assert last["step"] == 1 and last["changed"]
    (raised,) = last["interrupts"]
    assert (raised["node"], raised["kind"], raised["status"]) == (
        HOSTILE_NODE,
        "interrupt",
        "open",
    )
    assert raised["message"] == HOSTILE_QUESTION
    assert [w["channel"] for w in last["pending_writes"]] == ["__interrupt__"]

    plain = console.api(f"/runs/{console.plain_run}/graph-checkpoints").json()
    assert plain == {"items": [], "next_cursor": None}
    missing = console.api("/runs/01a20f2b-2371-72d8-88f1-ee35d40c6642/graph-checkpoints")
    assert missing.status_code == 404


def test_a_resumed_thread_shows_every_step_and_its_answered_interrupt(console: Console) -> None:
    (wait,) = console.app.runs.waits(console.agent, run_id=console.graph_run)
    console.app.runs.answer(console.agent, wait.wait_id, "yes")
    command = resume_command(console.saver, HOSTILE_THREAD)
    assert command is not None
    final = order_graph(console.saver).invoke(command, CONFIG)
    assert final["shipped"] is True

    items = console.api(f"/runs/{console.graph_run}/graph-checkpoints").json()["items"]
    assert [(c["step"], c["source"]) for c in items] == [
        (-1, "input"),
        (0, "loop"),
        (1, "loop"),
        (2, "loop"),
        (3, "loop"),
    ]
    assert [i["status"] for i in items[2]["interrupts"]] == ["answered"]
    resumed = items[2]["pending_writes"]
    assert {w["node"] for w in resumed} == {HOSTILE_NODE}
    assert {"__interrupt__", "shipped", "branch:to:ship"} <= {w["channel"] for w in resumed}
    rows = _checkpoint_rows(console.client.get(f"/console/runs/{console.graph_run}").text)
    assert len(rows) == 5 and "status-answered" in rows[2]["interrupts"]
    listed = console.client.get("/console/runs").text
    assert "completed" in _row(listed, console.graph_run)
