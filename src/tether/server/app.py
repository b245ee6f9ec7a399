"""The FastAPI application: the HTTP API, health, readiness and metrics.

:func:`create_app` wraps one open :class:`~tether.app.Tether`; ``tether serve`` runs it
under uvicorn. Every API route lives under ``/api/v1`` (one module per area:
``api_runs``, ``api_memory``, …), takes the caller's principal from its API key
(:mod:`tether.server.auth`) and calls the public Python API with it, so the permission
map decides every request. Errors are problem+json (:mod:`tether.server.problems`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from tether import __version__
from tether.app import Tether
from tether.runs.workflow import WorkflowRegistry
from tether.server import (
    api_approvals,
    api_audit,
    api_keys,
    api_memory,
    api_memory_policy,
    api_principals,
    api_procedures,
    api_retention,
    api_runbook,
    api_runs,
    api_threads,
    api_webhooks,
    api_working,
)
from tether.server.auth import TetherApp
from tether.server.console.site import mount_console
from tether.server.problems import PROBLEM_JSON, BodyLimit, Problem, install_problem_handlers
from tether.server.reference import add_reference

API_PREFIX = "/api/v1"
API_ROUTERS = (
    api_runs.router,
    api_runbook.router,
    api_retention.router,
    api_approvals.router,
    api_memory_policy.router,  # before api_memory: /memory/policy is no memory id
    api_memory.router,
    api_threads.router,
    api_working.router,
    api_procedures.router,
    api_audit.router,
    api_webhooks.router,
    api_principals.router,
    api_keys.router,
)
"""Every router of the HTTP API, mounted under :data:`API_PREFIX`."""

_GRAPHS = "TetherSaver, in the graph's own process; its threads are runs: GET /runs"
_GRAPH_STORE = "TetherStore, in the graph's own process; its items are memories: GET /memory"

NOT_OVER_HTTP: MappingProxyType[str, str] = MappingProxyType(
    {
        "runs.all": "GET /runs (runs.page) lists the same runs, filtered and paginated",
        "audit.entries": "GET /audit (audit.latest) lists the same entries, newest first",
        "threads.append": "POST /threads/{id}/turns appends one turn or many",
        "threads.last_turns": "GET /threads/{id}/tail gives the latest turns with their thread",
        "working.get": "GET /working/{id}/entry gives the same value with its expiry",
        "working.items": "GET /working/{id} gives every entry (items are its values)",
        "working.keys": "GET /working/{id} gives every entry (keys are its keys)",
        "threads.export_user": "a person is exported whole: POST /subjects/export",
        "working.export_sessions": "a person is exported whole: POST /subjects/export",
        "threads.erase_user": "a person is erased whole, memories too: POST /subjects/erase",
        "working.erase_sessions": "a person is erased whole, memories too: POST /subjects/erase",
        "graphs.checkpoint": _GRAPHS,
        "graphs.checkpoints": _GRAPHS,
        "graphs.copy_thread": _GRAPHS,
        "graphs.delete_for_runs": _GRAPHS,
        "graphs.delete_thread": _GRAPHS,
        "graphs.prune": _GRAPHS,
        "graphs.resume_values": _GRAPHS,
        "graphs.thread_run": _GRAPHS,
        "graphs.write": _GRAPHS,
        "graphs.writer": _GRAPHS,
        "graph_store.delete": _GRAPH_STORE,
        "graph_store.get": _GRAPH_STORE,
        "graph_store.namespaces": _GRAPH_STORE,
        "graph_store.opt_out": _GRAPH_STORE,
        "graph_store.put": _GRAPH_STORE,
        "graph_store.search": _GRAPH_STORE,
        "graph_store.sweep": _GRAPH_STORE,
        "platform.tenants": "the console's tenant picker (/console/runs) for platform admins",
        "platform.runs": "the console's run list (/console/runs?tenant=) for platform admins",
    }
)
"""Operations a principal may call that have no endpoint of their own, each with the
endpoint that serves it. Every other such operation has one (a test fails otherwise);
operations that take no principal (``maintenance``, ``files``) are beyond any API key."""

DESCRIPTION = """\
Durable runs and governed memory for long-running AI agents, over HTTP.

Authenticate with an API key (`tether api-keys create`) sent as
`Authorization: Bearer <key>`; the key acts as one principal of one tenant, and the roles
of the key decide what it may do (docs/permissions.md). Errors are
`application/problem+json` with a stable `code`; lists are paginated with `cursor`
(docs/http.md).
"""


class Health(BaseModel):
    status: str
    version: str


class Readiness(BaseModel):
    status: str
    backend: str


def create_app(
    tether_app: Tether,
    *,
    workflows: WorkflowRegistry | None = None,
    max_body_bytes: int | None = None,
) -> FastAPI:
    """The HTTP application over ``tether_app`` (which the caller opens and closes).

    Args:
        workflows: the workflows ``POST /api/v1/runs`` may start (none: starting a run
            is refused with ``invalid_input``).
        max_body_bytes: the largest request body accepted (default
            ``TETHER_SERVER_MAX_BODY_BYTES``).
    """
    api = FastAPI(
        title="Tether",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # FastAPI's pages load Swagger UI and ReDoc from a CDN: reference.py
        redoc_url=None,
        openapi_tags=[
            {"name": "runs", "description": "Start runs, read their timeline, act on them."},
            {"name": "runbook", "description": "An operator's actions on a run, with a reason."},
            {"name": "retention", "description": "Run retention, legal holds, gc."},
            {"name": "approvals", "description": "The approvals inbox across runs."},
            {"name": "memory", "description": "Governed memory: propose, recall, review."},
            {"name": "threads", "description": "Conversation threads and built contexts."},
            {"name": "working", "description": "A session's working memory."},
            {"name": "procedures", "description": "Published skills and policies."},
            {"name": "audit", "description": "The audit trail and the notes it cites."},
            {"name": "webhooks", "description": "Signed notifications to allowlisted URLs."},
            {"name": "principals", "description": "The tenant's principals and roles."},
            {"name": "api-keys", "description": "The tenant's API keys."},
            {"name": "operations", "description": "Health, readiness and metrics."},
        ],
    )
    api.state.tether = tether_app
    api.state.workflows = workflows or WorkflowRegistry()
    install_problem_handlers(api)
    limit = max_body_bytes or tether_app.settings.server_max_body_bytes
    api.add_middleware(BodyLimit, max_bytes=limit)
    for router in API_ROUTERS:
        api.include_router(router, prefix=API_PREFIX)
    api.include_router(_operations_router(tether_app))
    mount_console(api, tether_app, workflows=api.state.workflows)
    add_reference(api)
    _add_problem_schema(api)
    return api


def _operations_router(tether_app: Tether) -> APIRouter:
    router = APIRouter(tags=["operations"])

    @router.get("/healthz", summary="Liveness", response_model=Health)
    def healthz() -> Health:
        """Answers 200 while the process serves requests; needs no key and reads nothing."""
        return Health(status="ok", version=__version__)

    @router.get(
        "/readyz",
        summary="Readiness",
        response_model=Readiness,
        responses={503: {"description": "Not ready", "content": _problem_content()}},
    )
    def readyz(app: TetherApp) -> Readiness:
        """Answers 200 when the database answers and is at this server's schema version,
        else 503 with the reason (`storage_unavailable`, `schema_outdated`, …). Needs no
        key."""
        app.storage.check_schema()
        return Readiness(status="ready", backend=app.storage.backend)

    try:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        from tether.runs.prometheus import metrics_registry
    except ImportError:  # the metrics extra is not installed
        return router
    registry = metrics_registry(tether_app.storage, tether_app.clock)

    @router.get(
        "/metrics",
        summary="Prometheus metrics",
        response_class=PlainTextResponse,
        responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
    )
    def metrics() -> PlainTextResponse:
        """The run figures of the whole database in the Prometheus text format (runs by
        status, queue depth, pending approvals, oldest waits): counts only, no tenant's
        data. Needs no key; expose it only to the scraper."""
        return PlainTextResponse(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router


def _problem_content() -> dict[str, Any]:
    return {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _add_problem_schema(api: FastAPI) -> None:
    """Put :class:`Problem` into the OpenAPI components every error response refers to."""
    original = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is not None:
            return api.openapi_schema
        schema = original()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components["Problem"] = Problem.model_json_schema()
        api.openapi_schema = schema
        return schema

    api.openapi = openapi  # type: ignore[method-assign]
