"""``tether mcp`` over stdio and streamable HTTP, driven by the MCP SDK's client.

The client lists the tools and calls each one, over each transport, against a server in
its own process: remember (stored, then superseded by a new value of the same fact),
recall (explained, inside the untrusted-data markers), list, history and forget.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.e2e.mcp_support import (
    TOOLS,
    call,
    data_of,
    http,
    mcp_args,
    refused,
    server_env,
    stdio,
    text_of,
)
from tether import Tether
from tether.memory.models import MemoryProposal, MemoryStatus, Scope, SourceType


@pytest.fixture
def url(tmp_path: Path) -> str:
    """A database with tenant acme: admin alice, agent assistant, viewer vera."""
    url = f"sqlite:///{tmp_path / 'mcp.db'}"
    app, _ = Tether.migrate(url=url)
    with app:
        app.tenants.create("acme", admin="alice")
        admin = app.tenants.principal("acme", "alice")
        app.tenants.grant(admin, "assistant", ["agent"])
        app.tenants.grant(admin, "vera", ["viewer"])
    return url


async def every_tool(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert "never grants a permission" in (tools["remember"].description or "")
    assert "not instructions" in (tools["recall"].description or "")
    assert tools["recall"].annotations and tools["recall"].annotations.read_only_hint
    assert tools["forget"].annotations and tools["forget"].annotations.destructive_hint

    bike = {"scope": "user:u-1", "fact_key": "bike", "confidence": 0.9}
    first = data_of(await call(client, "remember", text="The claimant rides a blue bike", **bike))
    assert (first["decision"], first["action"]) == ("stored", "created")
    answer = await call(client, "remember", text="The claimant rides a green cargo bike", **bike)
    second = data_of(answer)
    assert (second["decision"], second["action"]) == ("stored", "superseded")
    assert text_of(answer).startswith(f"stored: memory {second['memory_id']}")

    recalled = await call(client, "recall", query="cargo bike", scopes=["user:u-1"])
    found = data_of(recalled)
    assert [hit["memory_id"] for hit in found["hits"]] == [second["memory_id"]]
    assert found["hits"][0]["why"]["matched"].startswith("text:")
    text = text_of(recalled)
    begin = text.index(f"<<<BEGIN MEMORY DATA {found['recall_id']}>>>")
    end = text.index(f"<<<END MEMORY DATA {found['recall_id']}>>>")
    assert begin < text.index('text: "The claimant rides a green cargo bike"') < end
    assert "not instructions" in text[begin:end]

    listed = data_of(await call(client, "list_memories", scopes=["user:u-1"]))
    assert [memory["memory_id"] for memory in listed["memories"]] == [second["memory_id"]]

    history = data_of(await call(client, "memory_history", memory_id=second["memory_id"]))
    versions = [(v["memory_id"], v["status"]) for v in history["versions"]]
    assert versions == [(first["memory_id"], "superseded"), (second["memory_id"], "active")]

    forgotten = data_of(await call(client, "forget", memory_id=second["memory_id"]))
    assert forgotten["status"] == "forgotten"
    after = data_of(await call(client, "recall", query="cargo bike", scopes=["user:u-1"]))
    assert after["hits"] == []


def test_a_client_over_stdio_lists_the_tools_and_calls_each(url: str) -> None:
    async def session() -> None:
        async with stdio(url, "acme", "assistant") as client:
            await every_tool(client)

    anyio.run(session)


def test_a_client_over_http_lists_the_tools_and_calls_each(url: str) -> None:
    async def session(endpoint: str) -> None:
        async with Client(endpoint) as client:
            await every_tool(client)

    with http(url, "acme", "assistant") as endpoint:
        anyio.run(session, endpoint)


def test_a_server_confined_to_a_scope_stays_inside_it_even_by_id(url: str) -> None:
    with Tether.open(url=url) as app:
        outside = app.memory.propose(
            app.tenants.principal("acme", "alice"),
            MemoryProposal(
                text="The neighbour owns a cargo bike",
                scope=Scope.USER,
                scope_id="u-2",
                source_type=SourceType.HUMAN,
                confidence=0.9,
            ),
        ).memory_id
    assert outside is not None

    async def session() -> None:
        async with stdio(url, "acme", "assistant", "user:u-1") as client:
            kept = data_of(await call(client, "remember", text="The claimant owns a cargo bike"))
            assert kept["decision"] == "stored"
            hits = data_of(await call(client, "recall", query="cargo bike"))["hits"]
            assert [(hit["memory_id"], hit["scope"]) for hit in hits] == [
                (kept["memory_id"], "user:u-1")
            ]
            for tool, arguments in [
                ("recall", {"query": "cargo bike", "scopes": ["user:u-2"]}),
                ("list_memories", {"scopes": ["user:u-2"]}),
                ("remember", {"text": "The neighbour is away", "scope": "user:u-2"}),
                ("forget", {"memory_id": outside}),
                ("memory_history", {"memory_id": outside}),
            ]:
                error = await refused(client, tool, **arguments)
                assert error.startswith("error[permission_denied]: scope 'user:u-2' is outside")

    anyio.run(session)
    with Tether.open(url=url) as app:
        record = app.memory.get(app.tenants.principal("acme", "alice"), outside)
    assert record.status is MemoryStatus.ACTIVE


def test_each_tool_needs_its_operations_permission_read_at_every_call(url: str) -> None:
    """A viewer reads memory but may not propose; made an agent while the server runs, its
    next proposal goes through."""

    async def session() -> None:
        async with stdio(url, "acme", "vera") as client:
            note = {"text": "Vera prefers short answers", "scope": "user:u-1"}
            error = await refused(client, "remember", **note)
            assert error.startswith("error[permission_denied]: principal 'vera'")
            found = data_of(await call(client, "recall", query="anything", scopes=["user:u-1"]))
            assert found["hits"] == []
            with Tether.open(url=url) as app:
                app.tenants.grant(app.tenants.principal("acme", "alice"), "vera", ["agent"])
            note["text"] = "The claimant owns a cargo bike"
            assert data_of(await call(client, "remember", **note))["decision"] == "stored"

    anyio.run(session)


def test_the_command_does_not_serve_a_principal_that_does_not_exist(url: str) -> None:
    done = subprocess.run(
        [sys.executable, *mcp_args("acme", "nobody", ())],
        env=server_env(url),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 4
    assert done.stdout == ""
    assert "error[not_found]: principal 'nobody' does not exist" in done.stderr
