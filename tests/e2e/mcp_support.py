"""``tether mcp`` in real processes, driven by the MCP SDK's own client.

:func:`stdio` starts ``python -m tether mcp`` as the client's subprocess; :func:`http`
starts it with ``--http`` on a free port and yields its URL (:func:`http_server` with any
options, and the server's stderr once it stopped); :func:`keyed` is a client over HTTP
that sends an API key. Either way the server gets only the environment named here: the
database, the test's master key, and the source under test on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.e2e.chaos_support import free_port, wait_until

TOOLS = {"remember", "recall", "forget", "list_memories", "memory_history"}
START_S = 60


def server_env(url: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in ("PATH", "PYTHONPATH") if name in os.environ}
    env["TETHER_URL"] = url
    env["TETHER_KEY_FILE"] = os.environ["TETHER_KEY_FILE"]
    return env


MCP = ["-m", "tether", "mcp"]


def bound(tenant: str, actor: str, scopes: tuple[str, ...]) -> list[str]:
    """The options that bind the server to ``actor`` of ``tenant`` (and to ``scopes``)."""
    return ["--tenant", tenant, "--as", actor] + [
        option for scope in scopes for option in ("--scope", scope)
    ]


def mcp_args(tenant: str, actor: str, scopes: tuple[str, ...]) -> list[str]:
    return [*MCP, *bound(tenant, actor, scopes)]


@asynccontextmanager
async def stdio_server(url: str, *args: str, errlog: Any = None) -> AsyncIterator[Client]:
    """A client of ``python -m tether mcp ARGS`` over stdio; the server's stderr goes to
    ``errlog`` (a file), or to a temporary one, never the test's output."""
    params = StdioServerParameters(command=sys.executable, args=[*MCP, *args], env=server_env(url))
    with tempfile.TemporaryFile("w+") as scratch:
        transport = stdio_client(params, errlog=errlog or scratch)
        async with Client(transport, read_timeout_seconds=START_S) as client:
            yield client


@asynccontextmanager
async def stdio(url: str, tenant: str, actor: str, *scopes: str) -> AsyncIterator[Client]:
    """A client of ``tether mcp`` over stdio, bound to ``actor`` of ``tenant``."""
    async with stdio_server(url, *bound(tenant, actor, scopes)) as client:
        yield client


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    endpoint: str
    stderr: str = ""
    """What the server wrote on stderr, once it stopped."""


@contextmanager
def http_server(url: str, *args: str) -> Iterator[HttpServer]:
    """``python -m tether mcp ARGS --http`` on a free port until the block ends.

    The server is stopped with SIGTERM and must exit cleanly (0)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *MCP, *args, "--http", "--port", str(port)],
        env=server_env(url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = HttpServer(process, f"http://127.0.0.1:{port}/mcp")
    try:
        wait_until(
            lambda: _answers(server.endpoint, process), START_S, "tether mcp --http to listen"
        )
        yield server
    finally:
        process.terminate()
        _, server.stderr = process.communicate(timeout=START_S)
    assert process.returncode == 0, server.stderr


@contextmanager
def http(url: str, tenant: str, actor: str, *scopes: str) -> Iterator[str]:
    """``tether mcp --http`` bound to ``actor`` of ``tenant``; yields its MCP URL."""
    with http_server(url, *bound(tenant, actor, scopes)) as server:
        yield server.endpoint


@asynccontextmanager
async def keyed(endpoint: str, key: str) -> AsyncIterator[Client]:
    """A client over streamable HTTP whose every request carries ``key`` as a Bearer token."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=START_S) as http_client:
        transport = streamable_http_client(endpoint, http_client=http_client)
        async with Client(transport, read_timeout_seconds=START_S) as client:
            yield client


def _answers(endpoint: str, process: subprocess.Popen[str]) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"tether mcp exited: {process.communicate()[1]}")
    address = urllib.parse.urlsplit(endpoint)
    try:
        socket.create_connection((address.hostname, address.port), timeout=1.0).close()
    except OSError:
        return False
    return True


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    """Call ``tool``; a tool error fails the test with its message."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return result


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """Call ``tool`` expecting a tool error; its text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, text_of(result)
    return text_of(result)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def data_of(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, text_of(result)
    return result.structured_content
