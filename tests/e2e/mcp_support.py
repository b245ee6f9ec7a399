"""``tether mcp`` in real processes, driven by the MCP SDK's own client.

:func:`stdio` starts ``python -m tether mcp`` as the client's subprocess; :func:`http`
starts it with ``--http`` on a free port and yields its URL. Either way the server gets
only the environment named here: the database, the test's master key, and the source
under test on ``PYTHONPATH``.
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
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from tests.e2e.chaos_support import free_port, wait_until

TOOLS = {"remember", "recall", "forget", "list_memories", "memory_history"}
START_S = 60


def server_env(url: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in ("PATH", "PYTHONPATH") if name in os.environ}
    env["TETHER_URL"] = url
    env["TETHER_KEY_FILE"] = os.environ["TETHER_KEY_FILE"]
    return env


def mcp_args(tenant: str, actor: str, scopes: tuple[str, ...]) -> list[str]:
    return ["-m", "tether", "mcp", "--tenant", tenant, "--as", actor] + [
        option for scope in scopes for option in ("--scope", scope)
    ]


@asynccontextmanager
async def stdio(url: str, tenant: str, actor: str, *scopes: str) -> AsyncIterator[Client]:
    """A client of ``tether mcp`` over stdio, bound to ``actor`` of ``tenant``; the
    server's stderr goes to a file, not the test's output."""
    params = StdioServerParameters(
        command=sys.executable, args=mcp_args(tenant, actor, scopes), env=server_env(url)
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=START_S) as c:
            yield c


@contextmanager
def http(url: str, tenant: str, actor: str, *scopes: str) -> Iterator[str]:
    """``tether mcp --http`` on a free port until the block ends; yields its MCP URL.

    The server is stopped with SIGTERM and must exit cleanly (0)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *mcp_args(tenant, actor, scopes), "--http", "--port", str(port)],
        env=server_env(url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    endpoint = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until(lambda: _answers(endpoint, process), START_S, "tether mcp --http to listen")
        yield endpoint
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=START_S)
    assert process.returncode == 0, stderr


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
