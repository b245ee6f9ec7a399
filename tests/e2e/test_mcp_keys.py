"""``tether mcp`` bound by API keys, on SQLite and PostgreSQL.

Over streamable HTTP with no bound principal, one server serves clients of different
tenants, each request acting as the principal of the key it carries; a request without a
valid key is refused (401) before any tool runs, and a key revoked while a client is
connected stops working at its next request. ``--api-key`` binds a server to one key's
principal, checked at every call. A key never shows in the server's output or its
command line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from tests.e2e.mcp_support import (
    call,
    data_of,
    http_server,
    keyed,
    refused,
    stdio_server,
    text_of,
)
from tests.support import TestDatabase
from tether import Tether
from tether.cli.main import app as cli_app
from tether.memory.models import MemoryStatus, Scope

SECRET = "acme-secret: the claimant owns a cargo bike"
IN_U1 = {"scopes": ["user:u-1"]}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
REMEMBER_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "remember", "arguments": {"text": SECRET, "scope": "user:u-1"}},
}


@dataclass(frozen=True)
class Keys:
    acme: str
    """acme's assistant (agent and viewer), with both roles."""
    acme_viewer: str
    """The same principal's key made with the viewer role only."""
    acme_revoked: str
    globex: str
    """globex's assistant (agent)."""

    def secrets(self) -> list[str]:
        return [key.rpartition("~")[2] for key in vars(self).values()]


def keys(backend: TestDatabase) -> Keys:
    """Tenants acme and globex, each with an admin and an assistant, and API keys."""
    made = {}
    with backend.open() as app:
        for tenant in ("acme", "globex"):
            app.tenants.create(tenant, admin=f"{tenant}-admin")
            admin = app.tenants.principal(tenant, f"{tenant}-admin")
            app.tenants.grant(admin, "assistant", ["agent", "viewer"])
            made[tenant] = app.api_keys.create(admin, "assistant", name="mcp").secret
        admin = app.tenants.principal("acme", "acme-admin")
        viewer = app.api_keys.create(admin, "assistant", ["viewer"]).secret
        revoked = app.api_keys.create(admin, "assistant")
        app.api_keys.revoke(admin, revoked.key.key_id)
    return Keys(made["acme"], viewer, revoked.secret, made["globex"])


def revoke_acme_key(backend: TestDatabase) -> None:
    """Revoke acme's key named ``mcp`` (:attr:`Keys.acme`)."""
    with backend.open() as app:
        admin = app.tenants.principal("acme", "acme-admin")
        [key] = [key for key in app.api_keys.all(admin) if key.name == "mcp"]
        app.api_keys.revoke(admin, key.key_id)


def acme_memories(backend: TestDatabase) -> list[tuple[str, MemoryStatus]]:
    with backend.open() as app:
        admin = app.tenants.principal("acme", "acme-admin")
        pending = app.memory.pending(admin)
        records = app.memory.in_scopes(admin, [(Scope.USER, "u-1")]) + pending
    return [(record.text, record.status) for record in records]


def test_one_server_serves_each_request_as_its_keys_principal_and_tenant(
    backend: TestDatabase,
) -> None:
    made = keys(backend)

    async def sessions(endpoint: str) -> str:
        async with keyed(endpoint, made.acme) as acme, keyed(endpoint, made.globex) as globex:
            kept = data_of(await call(acme, "remember", text=SECRET, scope="user:u-1"))
            assert kept["decision"] == "stored"
            memory_id = str(kept["memory_id"])

            for query in ({}, {"include_unrelated": True}):
                recalled = await call(globex, "recall", query="cargo bike", **query, **IN_U1)
                assert data_of(recalled)["hits"] == []
                assert "acme-secret" not in text_of(recalled)
            listed = await call(globex, "list_memories", **IN_U1)
            assert data_of(listed)["memories"] == []
            for tool in ("forget", "memory_history"):
                error = await refused(globex, tool, memory_id=memory_id)
                assert error.startswith(f"error[not_found]: no memory {memory_id} in tenant")
                assert "acme-secret" not in error

            hits = data_of(await call(acme, "recall", query="cargo bike", **IN_U1))["hits"]
            assert [(hit["memory_id"], hit["created_by"]) for hit in hits] == [
                (memory_id, "assistant")
            ]
            return memory_id

    with http_server(backend.url) as server:
        memory_id = anyio.run(sessions, server.endpoint)
    assert "each request acts as the principal of the API key it carries" in server.stderr
    assert not any(secret in server.stderr for secret in made.secrets())
    with backend.open() as app:
        record = app.memory.get(app.tenants.principal("acme", "acme-admin"), memory_id)
    assert (record.status, record.created_by) == (MemoryStatus.ACTIVE, "assistant")


def test_a_request_without_a_valid_key_is_refused_before_any_tool_runs(
    backend: TestDatabase,
) -> None:
    made = keys(backend)
    prefix, _, secret = made.acme.rpartition("~")
    unknown = f"{prefix}~{'0' * len(secret)}"
    refusals = [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": f"Basic {made.acme}"},
        {"Authorization": "Bearer not-a-key"},
        {"Authorization": f"Bearer {unknown}"},
        {"Authorization": f"Bearer {made.acme_revoked}"},
    ]

    async def revoked_while_connected(endpoint: str) -> None:
        with pytest.raises(ExceptionGroup) as caught:
            async with keyed(endpoint, unknown):
                pass
        assert caught.group_contains(MCPError)
        async with keyed(endpoint, made.acme) as client:
            note = {"text": "The claimant rides a bike", "scope": "user:u-1"}
            assert data_of(await call(client, "remember", **note))["decision"] == "stored"
            revoke_acme_key(backend)
            with pytest.raises(MCPError):
                await client.call_tool("remember", {**note, "text": SECRET})

    with http_server(backend.url) as server:
        for headers in refusals:
            answer = httpx.post(
                server.endpoint, json=REMEMBER_CALL, headers={**HEADERS, **headers}, timeout=30
            )
            assert answer.status_code == 401, headers
            assert answer.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
            assert json.loads(answer.text)["error"] == "invalid_token"
        anyio.run(revoked_while_connected, server.endpoint)
    assert acme_memories(backend) == [("The claimant rides a bike", MemoryStatus.ACTIVE)]
    assert not any(secret in server.stderr for secret in [*made.secrets(), secret])


def test_a_session_belongs_to_the_key_that_opened_it(backend: TestDatabase) -> None:
    made = keys(backend)
    opening = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    with http_server(backend.url) as server, httpx.Client(headers=HEADERS, timeout=30) as client:
        opened = client.post(
            server.endpoint, json=opening, headers={"Authorization": f"Bearer {made.acme}"}
        )
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        taken = client.post(
            server.endpoint,
            json=REMEMBER_CALL,
            headers={"Authorization": f"Bearer {made.globex}", "Mcp-Session-Id": session},
        )
    assert taken.status_code == 404
    assert acme_memories(backend) == []


def test_a_viewer_key_reads_but_cannot_forget_or_remember(backend: TestDatabase) -> None:
    """The key's roles, not its principal's: the principal is an agent, the key a viewer."""
    made = keys(backend)

    async def sessions(endpoint: str) -> str:
        async with keyed(endpoint, made.acme) as agent, keyed(endpoint, made.acme_viewer) as viewer:
            kept = data_of(await call(agent, "remember", text=SECRET, scope="user:u-1"))
            memory_id = str(kept["memory_id"])
            hits = data_of(await call(viewer, "recall", query="cargo bike", **IN_U1))["hits"]
            assert [hit["memory_id"] for hit in hits] == [memory_id]
            error = await refused(viewer, "forget", memory_id=memory_id)
            assert error.startswith("error[permission_denied]: principal 'assistant'")
            error = await refused(viewer, "remember", text="The claimant moved", scope="user:u-1")
            assert error.startswith("error[permission_denied]: principal 'assistant'")
            return memory_id

    with http_server(backend.url) as server:
        anyio.run(sessions, server.endpoint)
    assert acme_memories(backend) == [(SECRET, MemoryStatus.ACTIVE)]


def test_a_server_bound_by_api_key_over_stdio_acts_as_the_key_until_it_is_revoked(
    backend: TestDatabase, tmp_path: Path
) -> None:
    made = keys(backend)

    async def session() -> None:
        with (tmp_path / "stderr").open("w+") as errlog:
            async with stdio_server(backend.url, "--api-key", made.acme, errlog=errlog) as client:
                kept = data_of(await call(client, "remember", text=SECRET, scope="user:u-1"))
                assert kept["decision"] == "stored"
                hits = data_of(await call(client, "recall", query="cargo bike", **IN_U1))["hits"]
                assert [hit["created_by"] for hit in hits] == ["assistant"]
                revoke_acme_key(backend)
                error = await refused(client, "recall", query="cargo bike", **IN_U1)
                assert error.startswith("error[unauthenticated]: the API key is not valid")
                assert made.acme not in error

    anyio.run(session)
    stderr = (tmp_path / "stderr").read_text()
    assert stderr.startswith("database: ")
    assert not any(secret in stderr for secret in made.secrets())


def test_a_key_given_on_the_command_line_leaves_it_before_the_server_serves(
    backend: TestDatabase,
) -> None:
    """Any user of the machine can read a process's command line; the server moves the
    key to its environment, which only its owner can read."""
    made = keys(backend)

    async def session(endpoint: str) -> None:
        async with Client(endpoint) as client:
            kept = data_of(await call(client, "remember", text=SECRET, scope="user:u-1"))
            assert kept["decision"] == "stored"

    with http_server(backend.url, "--api-key", made.acme) as server:
        command_line = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().split(b"\0")
        assert b"--http" in command_line
        assert not any(made.acme.rpartition("~")[2].encode() in arg for arg in command_line)
        anyio.run(session, server.endpoint)
    assert "without authentication (loopback only)" in server.stderr
    assert not any(secret in server.stderr for secret in made.secrets())
    assert acme_memories(backend) == [(SECRET, MemoryStatus.ACTIVE)]


UNKNOWN_KEY = f"tk~acme~{'1' * 16}~{'2' * 64}"


@pytest.mark.parametrize(
    ("options", "code", "says"),
    [
        ([], "invalid_input", "name who the tools act as: --api-key"),
        (["--tenant", "acme"], "invalid_input", "give both --tenant and --as"),
        (["--api-key", UNKNOWN_KEY, "--as", "assistant"], "invalid_input", "not both"),
        (["--api-key", UNKNOWN_KEY, "--http", "--host", "0.0.0.0"], "invalid_input", "loopback"),
        (
            ["-t", "acme", "--as", "assistant", "--http", "--host", "::"],
            "invalid_input",
            "loopback",
        ),
        (["--api-key", UNKNOWN_KEY], "unauthenticated", "the API key is not valid"),
        (["--api-key", UNKNOWN_KEY, "--http"], "unauthenticated", "the API key is not valid"),
    ],
)
def test_the_command_refuses_a_binding_it_cannot_serve_before_it_serves(
    tmp_path: Path, options: list[str], code: str, says: str
) -> None:
    """Without a principal over stdio, with two of them, or bound to one off a loopback
    address (where no request would be authenticated); an unknown key stops it at start."""
    url = f"sqlite:///{tmp_path / 'mcp.db'}"
    Tether.migrate(url=url)[0].close()
    result = CliRunner().invoke(cli_app, ["mcp", *options], env={"TETHER_URL": url})
    assert result.exit_code == (6 if code == "unauthenticated" else 3), result.output
    assert f"error[{code}]: " in result.stderr and says in result.stderr
    assert "2" * 64 not in result.output + result.stderr
