"""``tether mcp``: serve governed memory to MCP clients as a principal, or as each
request's API key."""

from __future__ import annotations

import ipaddress
import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from tether.cli._common import UrlOption, err_console, open_app, reporting
from tether.errors import InvalidInput

if TYPE_CHECKING:
    from tether.integrations.mcp.binding import Binding

API_KEY_VARIABLE = "TETHER_API_KEY"


def mcp(
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            "-t",
            envvar="TETHER_TENANT",
            help="Tenant of the principal the tools act as (with --as).",
            show_default=False,
        ),
    ] = None,
    actor: Annotated[
        str | None,
        typer.Option(
            "--as",
            envvar="TETHER_PRINCIPAL",
            help="Principal the tools act as (with --tenant); its roles decide what is allowed.",
            show_default=False,
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar=API_KEY_VARIABLE,
            help="Act as this API key's principal, with the key's roles, instead of --tenant "
            "and --as; checked at every call. Prefer the environment variable.",
            show_default=False,
        ),
    ] = None,
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
            "--http",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio. Without "
            "--api-key or --tenant/--as, every request carries its own API key.",
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
        if api_key:
            _keep_off_the_command_line(api_key)
        try:
            from tether.integrations.mcp.server import build_server, serve_http, serve_stdio
        except ImportError as exc:
            raise InvalidInput(
                f"tether mcp needs the MCP SDK ({exc.name} is missing): pip install 'tether[mcp]'"
            ) from None
        binding = _binding(tenant, actor, api_key, scope or [], http=http)
        if http and not binding.per_request and not _loopback(host):
            raise InvalidInput(
                f"{host} is not a loopback address: a server bound to one principal "
                "(--tenant/--as or --api-key) authenticates no request, so it serves HTTP "
                "only on a loopback address; leave both out and every request must carry "
                "`Authorization: Bearer <API key>`"
            )
        with open_app(url) as app:
            server = build_server(app, binding)
            if not http:
                serve_stdio(server)
                return
            endpoint = f"http://{host}:{port}/mcp"
            if binding.per_request:
                err_console.print(
                    f"MCP server at {endpoint}: each request acts as the principal of the "
                    "API key it carries (Authorization: Bearer)",
                    highlight=False,
                )
            else:
                err_console.print(
                    f"MCP server at {endpoint}: every request acts as the bound principal, "
                    "without authentication (loopback only)",
                    highlight=False,
                )
            serve_http(server, host=host, port=port)


def _binding(
    tenant: str | None, actor: str | None, api_key: str | None, scopes: list[str], *, http: bool
) -> Binding:
    """Who the tools act as: the configured principal, the key's, or each request's."""
    from tether.integrations.mcp.binding import Binding, by_api_key, configured, request_key

    if api_key:
        if tenant or actor:
            raise InvalidInput(
                "an API key names its own tenant and principal: give --api-key or "
                "--tenant and --as, not both"
            )
        return Binding.of(by_api_key(api_key), scopes)
    if tenant and actor:
        return Binding.of(configured(tenant, actor), scopes)
    if tenant or actor:
        raise InvalidInput("give both --tenant and --as (or --api-key)")
    if not http:
        raise InvalidInput(
            f"name who the tools act as: --api-key (or {API_KEY_VARIABLE}), or --tenant "
            "and --as; only --http serves without, taking each request's API key"
        )
    return Binding.of(request_key, scopes)


def _keep_off_the_command_line(key: str) -> None:
    """Start the command again with ``key`` moved from its command line, which any user of
    the machine can read (``ps``), to its environment, which only its owner can.

    The process keeps its id and its standard streams (an MCP client's stdio pipes).
    Nothing happens when the key did not come from the command line (it came from the
    environment, or the command runs inside another program) or where a process cannot
    replace itself in place (not POSIX).
    """
    given = sys.orig_argv
    kept: list[str] = []
    index = 0
    while index < len(given):
        if given[index] == "--api-key" and given[index + 1 : index + 2] == [key]:
            index += 2
            continue
        if given[index] != f"--api-key={key}":
            kept.append(given[index])
        index += 1
    if len(kept) == len(given) or os.name != "posix" or not sys.executable:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, kept, {**os.environ, API_KEY_VARIABLE: key})


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
