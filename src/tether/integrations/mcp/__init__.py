"""An MCP memory server: remember, recall, forget, list and history for any MCP client.

Needs the ``mcp`` extra (``pip install 'tether[mcp]'``). ``tether mcp`` serves it over
stdio or streamable HTTP; in Python::

    server = build_server(app, Binding.of(configured("acme", "assistant"), ["user:u-1"]))
    serve_stdio(server)

``Binding.of(by_api_key(key))`` acts as an API key's principal instead, and
``Binding.of(request_key)`` as the principal of each HTTP request's key. See ``docs/mcp.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.integrations.mcp.binding import (
        Binding,
        PrincipalSource,
        by_api_key,
        configured,
        request_key,
    )
    from tether.integrations.mcp.server import build_server, serve_http, serve_stdio

_EXPORTS = {
    "Binding": "tether.integrations.mcp.binding",
    "PrincipalSource": "tether.integrations.mcp.binding",
    "by_api_key": "tether.integrations.mcp.binding",
    "configured": "tether.integrations.mcp.binding",
    "request_key": "tether.integrations.mcp.binding",
    "build_server": "tether.integrations.mcp.server",
    "serve_http": "tether.integrations.mcp.server",
    "serve_stdio": "tether.integrations.mcp.server",
}

__all__ = [
    "Binding",
    "PrincipalSource",
    "build_server",
    "by_api_key",
    "configured",
    "request_key",
    "serve_http",
    "serve_stdio",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
