"""``tether serve``: the HTTP API under uvicorn (needs the ``server`` extra)."""

from __future__ import annotations

from typing import Annotated

import typer

from tether.cli._common import UrlOption, err_console, open_app, reporting
from tether.errors import InvalidInput
from tether.runs.workflow import WorkflowRegistry


def serve(
    host: Annotated[
        str, typer.Option(envvar="TETHER_SERVE_HOST", help="Address to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(envvar="TETHER_SERVE_PORT", help="Port to listen on.")
    ] = 8000,
    workflows: Annotated[
        str | None,
        typer.Option(
            envvar="TETHER_WORKFLOWS",
            help="module:attribute of the WorkflowRegistry whose workflows POST /api/v1/runs "
            "may start (none: runs are started elsewhere).",
        ),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Serve the HTTP API, the operator console (/console), /healthz, /readyz and /metrics
    until stopped (Ctrl-C).

    Callers authenticate with API keys (`tether api-keys create`). Workers run separately
    (`tether worker`); this process only reads and writes the database.
    """
    with reporting():
        try:
            import uvicorn

            from tether.server.app import create_app
        except ImportError as exc:
            raise InvalidInput(
                f"tether serve needs the server extra ({exc.name} is missing): "
                "pip install 'tether[server]'"
            ) from None
        registry = _registry(workflows)
        with open_app(url) as app:
            api = create_app(app, workflows=registry)
            err_console.print(f"serving the API at http://{host}:{port}/api/v1 (docs: /docs)")
            err_console.print(
                f"operator console at http://{host}:{port}/console (log in with an API key)"
            )
            uvicorn.run(api, host=host, port=port, log_level="info", access_log=False)


def _registry(spec: str | None) -> WorkflowRegistry:
    if not spec:
        return WorkflowRegistry()
    from tether.runs.worker import load_registry

    return load_registry(spec)
