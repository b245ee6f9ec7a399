"""``tether mcp``: serve governed memory to MCP clients as one principal."""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from tether.cli._common import (
    ActorOption,
    TenantOption,
    UrlOption,
    err_console,
    open_app,
    reporting,
)
from tether.errors import InvalidInput


def mcp(
    tenant: TenantOption,
    actor: ActorOption,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            "-s",
            help="Confine the tools to this scope:id (repeatable, e.g. user:u-1); a tool "
            "that names no scope uses these. Without it, tools name their scopes.",
        ),
    ] = None,
    http: Annotated[
        bool,
        typer.Option(
            "--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."
        ),
    ] = False,
    host: Annotated[
        str, typer.Option(envvar="TETHER_MCP_HOST", help="Address to listen on with --http.")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(min=1, max=65535, envvar="TETHER_MCP_PORT", help="Port with --http."),
    ] = 8000,
    url: UrlOption = None,
) -> None:
    """Serve governed memory to MCP clients (stdio, or streamable HTTP with --http)."""
    with reporting():
        try:
            from tether.integrations.mcp.binding import Binding, configured
            from tether.integrations.mcp.server import build_server, serve_http, serve_stdio
        except ImportError as exc:
            raise InvalidInput(
                f"tether mcp needs the MCP SDK ({exc.name} is missing): pip install 'tether[mcp]'"
            ) from None
        binding = Binding.of(configured(tenant, actor), scope or [])
        with open_app(url) as app:
            server = build_server(app, binding)
            if not http:
                serve_stdio(server)
                return
            if not _loopback(host):
                err_console.print(
                    f"warning: {host} is not a loopback address: whoever reaches the port "
                    f"acts as {actor} of {tenant}",
                    highlight=False,
                )
            err_console.print(f"MCP server at http://{host}:{port}/mcp", highlight=False)
            serve_http(server, host=host, port=port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
