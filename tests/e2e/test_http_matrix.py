"""The HTTP API's authorization matrix, generated from the permission map.

Every endpoint under ``/api/v1`` is called with an API key of every role of ``acme``, of
every role of ``globex`` and of a platform administrator, on each backend, naming
``acme``'s objects. The expected answer of each cell comes from the map
(:mod:`tether.permissions`), never written by hand:

- own tenant: allowed (the endpoint's success status) when the role holds the
  operation's permission and the map's rule for that wait or memory scope allows it,
  else 403 with the tenant's audit trail unchanged;
- another tenant: 403 when its role lacks the permission, else the object is not found
  (404) or the answer holds nothing of ``acme``; ``acme``'s trail never grows.

Every request without a key, with a malformed key or with a revoked key is 401. A test
fails when an endpoint has no row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.conformance.test_permission_map import (
    HOOKS,
    OTHER,
    OWN,
    PROCEDURES,
    REGISTRY,
    World,
    approval_rule,
    scope_rule,
    wait_rule,
)
from tests.support import PostgresServer
from tether import FakeClock, Tether
from tether.config import load_settings
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import Scope
from tether.permissions import NO_PRINCIPAL, OPERATIONS, allows
from tether.principals import GLOBAL_TENANT, Principal, Role
from tether.server import create_app
from tether.server.app import API_PREFIX, API_ROUTERS, NOT_OVER_HTTP

SHARED = "shared-bot"
"""A principal of both tenants, so a key for it can be made in either."""
NEWCOMER = "http-newcomer"
"""The principal an admin creates over HTTP."""


@dataclass(frozen=True)
class Endpoint:
    method: str
    route: str
    """The route as FastAPI declares it, below ``/api/v1``."""
    operation: str
    params: dict[str, str] = field(default_factory=dict)
    """Path parameter -> the target (an object of ``acme``) it names."""
    body: Callable[[dict[str, str]], Any] | None = None
    fresh: tuple[str, ...] = ()
    rule: Callable[[Principal], bool] | None = None
    ok: int = 200
    query: str = ""
    """A query string the call adds (``checkpoint=0``); ``{name}`` is a parameter too."""

    @property
    def label(self) -> str:
        label = f"{self.method} {self.route}" + (f"?{self.query}" if self.query else "")
        return label + (f" [{self.fresh[0]}]" if self.fresh else "")

    def url(self, targets: dict[str, str]) -> str:
        values = {name: quote(targets[target], safe="") for name, target in self.params.items()}
        query = self.query.format_map(values)
        return API_PREFIX + self.route.format(**values) + (f"?{query}" if query else "")


def _recall(_: dict[str, str]) -> dict[str, Any]:
    return {"query": "cargo bike", "scopes": ["user:u-1"]}


def _proposal(_: dict[str, str]) -> dict[str, Any]:
    return {
        "text": "The claimant prefers email",
        "scope": "user",
        "scope_id": "u-2",
        "source_type": "human",
        "confidence": 0.9,
    }


def _reason(_: dict[str, str]) -> dict[str, Any]:
    return {"reason": "matrix", "comment": "acme-secret comment"}


def _hold_reason(_: dict[str, str]) -> dict[str, Any]:
    return {"reason": "acme-secret litigation"}


RUN = {"run_id": "run"}
THREAD = {"thread_id": "thread"}
SESSION = {"session_id": "session"}
E = Endpoint
ENDPOINTS: list[Endpoint] = [
    E("POST", "/runs", "runs.start", body=lambda t: {"workflow": "asking"}, ok=201),
    E("GET", "/runs", "runs.page"),
    E("GET", "/runs/stuck", "runs.stuck"),
    E("GET", "/runs/{run_id}", "runs.get", RUN),
    E("GET", "/runs/{run_id}/state", "runs.state", RUN),
    E("GET", "/runs/{run_id}/events", "runs.events", RUN),
    E("GET", "/runs/{run_id}/checkpoints", "runs.checkpoints", RUN),
    E("GET", "/runs/{run_id}/graph-checkpoints", "graphs.timeline", {"run_id": "graph_run"}),
    E("GET", "/runs/{run_id}/journal", "runs.journal", RUN),
    E("GET", "/runs/{run_id}/waits", "runs.waits", RUN),
    E("GET", "/runs/{run_id}/handoff", "runs.handoff_document", RUN),
    E("GET", "/runs/{run_id}/handoff.md", "runs.handoff", RUN),
    E("GET", "/runs/{run_id}/inspect", "runbook.inspect", RUN),
    E("GET", "/runs/{run_id}/fork-plan", "runbook.plan_fork", RUN, query="checkpoint=0"),
    E("POST", "/runs/{run_id}/pause", "runbook.pause", RUN, _reason, ("run",)),
    E(
        "POST",
        "/runs/{run_id}/resume",
        "runbook.resume",
        {"run_id": "scheduled"},
        _reason,
        ("scheduled",),
    ),
    E("POST", "/runs/{run_id}/cancel", "runbook.cancel", RUN, _reason, ("run",)),
    E(
        "POST",
        "/runs/{run_id}/retry",
        "runbook.retry",
        {"run_id": "cancelled"},
        _reason,
        ("cancelled",),
    ),
    E(
        "POST",
        "/runs/{run_id}/retry-node",
        "runbook.retry_node",
        RUN,
        lambda t: {"reason": "matrix", "rerun_effects": False},
        ("run",),
    ),
    E(
        "POST",
        "/runs/{run_id}/skip",
        "runbook.skip",
        RUN,
        lambda t: {"reason": "matrix", "next_node": "ask"},
        ("run",),
    ),
    E(
        "POST",
        "/runs/{run_id}/complete",
        "runbook.complete",
        RUN,
        lambda t: {"reason": "matrix", "output": {"answer": "by hand"}},
        ("run",),
    ),
    E(
        "POST",
        "/runs/{run_id}/fork",
        "runbook.fork",
        RUN,
        lambda t: {"reason": "matrix", "checkpoint": 0},
        ok=201,
    ),
    E("GET", "/runs/concurrency-limit", "runs.concurrency_limit"),
    E(
        "PUT",
        "/runs/concurrency-limit",
        "runs.set_concurrency_limit",
        body=lambda t: {"max_running": None},
    ),
    E("GET", "/retention/policies", "retention.policies"),
    E(
        "PUT",
        "/retention/policies/{workflow}",
        "retention.set_policy",
        {"workflow": "workflow"},
        lambda t: {"keep_days": 30},
    ),
    E(
        "DELETE",
        "/retention/policies/{workflow}",
        "retention.remove_policy",
        {"workflow": "policy"},
        fresh=("policy",),
        ok=204,
    ),
    E("GET", "/retention/holds", "retention.holds"),
    E("POST", "/runs/{run_id}/holds", "retention.hold", RUN, _hold_reason, ("run",), ok=201),
    E(
        "POST",
        "/runs/{run_id}/holds/release",
        "retention.release",
        {"run_id": "held_run"},
        _hold_reason,
        ("held_run",),
    ),
    E("POST", "/gc", "retention.gc", body=lambda t: {"dry_run": True}),
    E("POST", "/housekeeping/run", "housekeeping.run"),
    E("GET", "/runs/{run_id}/inbox", "inbox.messages", RUN),
    E(
        "POST",
        "/runs/{run_id}/inbox",
        "inbox.send",
        RUN,
        lambda t: {"message": {"hi": 1}},
        ("run",),
        ok=201,
    ),
    E("GET", "/waits", "runs.waits"),
    E("GET", "/waits/{wait_id}", "runs.wait", {"wait_id": "clarification"}),
    E(
        "POST",
        "/waits/{wait_id}/answer",
        "runs.answer",
        {"wait_id": "clarification"},
        lambda t: {"answer": "yes"},
        ("clarification",),
        wait_rule("clarification_required"),
    ),
    E(
        "POST",
        "/waits/{wait_id}/answer",
        "runs.answer",
        {"wait_id": "external"},
        lambda t: {"answer": "back"},
        ("external",),
        wait_rule("external_dependency"),
    ),
    E(
        "POST",
        "/waits/{wait_id}/answer",
        "runs.answer",
        {"wait_id": "review"},
        lambda t: {"answer": {"allow": True}},
        ("review",),
        wait_rule("human_review"),
    ),
    E("GET", "/approvals", "runs.waits"),
    E("GET", "/approvals/{approval_id}", "runs.wait", {"approval_id": "approval"}),
    E(
        "POST",
        "/approvals/{approval_id}/approve",
        "runs.decide",
        {"approval_id": "approval"},
        lambda t: {"comment": "fine"},
        ("approval",),
        approval_rule,
    ),
    E(
        "POST",
        "/approvals/{approval_id}/reject",
        "runs.decide",
        {"approval_id": "approval"},
        lambda t: {},
        ("approval",),
        approval_rule,
    ),
    E("POST", "/memory/proposals", "memory.propose", body=_proposal),
    E("POST", "/memory/recall", "memory.recall", body=_recall),
    E("GET", "/memory/pending", "memory.pending"),
    E("GET", "/memory/recalls", "memory.recalls"),
    E("GET", "/memory/{memory_id}", "memory.get", {"memory_id": "memory"}),
    E("GET", "/memory/{memory_id}/history", "memory.history", {"memory_id": "memory"}),
    E(
        "POST",
        "/memory/{memory_id}/correct",
        "memory.correct",
        {"memory_id": "memory"},
        lambda t: {"text": "The claimant owns two bikes"},
        ("memory",),
    ),
    E(
        "POST",
        "/memory/{memory_id}/forget",
        "memory.forget",
        {"memory_id": "memory"},
        None,
        ("memory",),
        scope_rule("user", "forget"),
    ),
    E("POST", "/memory/{memory_id}/confirm", "memory.confirm", {"memory_id": "memory"}),
    E(
        "POST",
        "/memory/{memory_id}/contradict",
        "memory.contradict",
        {"memory_id": "tenant_memory"},
        None,
        ("tenant_memory",),
        scope_rule("tenant", "contradict"),
    ),
    E(
        "POST",
        "/memory/{memory_id}/approve",
        "memory.approve",
        {"memory_id": "held"},
        None,
        ("held",),
        scope_rule("tenant", "approve"),
    ),
    E(
        "POST",
        "/memory/{memory_id}/reject",
        "memory.reject",
        {"memory_id": "held"},
        None,
        ("held",),
        scope_rule("tenant", "reject"),
    ),
    E("GET", "/memory", "memory.in_scopes", query="scope=user:u-1"),
    E(
        "POST",
        "/memory/proposals/batch",
        "memory.propose_many",
        body=lambda t: {"proposals": [_proposal(t)]},
    ),
    E("GET", "/memory/policy", "memory.policy"),
    E("PUT", "/memory/policy", "memory.configure", body=lambda t: {}),
    E("POST", "/memory/consent", "memory.grant_consent", body=lambda t: {}, ok=204),
    E("DELETE", "/memory/consent", "memory.revoke_consent", ok=204),
    E(
        "POST",
        "/memory/holds",
        "memory.place_hold",
        body=lambda t: {"scope": "user", "scope_id": "u-9", "reason": "a case"},
        ok=201,
    ),
    E(
        "POST",
        "/memory/sources/invalidate",
        "memory.invalidate_source",
        body=lambda t: {"source_ref": "doc:1", "new_version": "2"},
    ),
    E("POST", "/memory/retention", "memory.retention_cycle", body=lambda t: {}),
    E("POST", "/memory/reembed", "memory.reembed", body=lambda t: {}),
    E("POST", "/subjects/export", "subjects.export", body=lambda t: {"user_id": "u-1"}),
    E("POST", "/subjects/erase", "subjects.erase", body=lambda t: {"user_id": "u-7"}),
    E("POST", "/threads", "threads.create", body=lambda t: {"user_id": "u-3"}, ok=201),
    E("GET", "/threads", "threads.all"),
    E("GET", "/threads/{thread_id}", "threads.get", {"thread_id": "thread"}),
    E("GET", "/threads/{thread_id}/turns", "threads.turns", {"thread_id": "thread"}),
    E(
        "POST",
        "/threads/{thread_id}/turns",
        "threads.append_many",
        {"thread_id": "thread"},
        lambda t: {"turns": [{"role": "user", "content": "hi"}]},
        ok=201,
    ),
    E("GET", "/threads/{thread_id}/summaries", "threads.summaries", {"thread_id": "thread"}),
    E(
        "POST",
        "/threads/{thread_id}/summaries",
        "threads.summarize",
        {"thread_id": "thread"},
        lambda t: {"through_seq": 2},
        ("thread",),
    ),
    E(
        "POST",
        "/threads/{thread_id}/context",
        "context.build",
        {"thread_id": "thread"},
        lambda t: {"budget": 4000},
    ),
    E("POST", "/threads/retention", "threads.retention_cycle"),
    E("GET", "/threads/{thread_id}/tail", "threads.tail", THREAD, query="count=2"),
    E(
        "GET",
        "/threads/{thread_id}/refs/{ref}",
        "threads.find_turns",
        {"thread_id": "thread", "ref": "ref"},
    ),
    E("GET", "/turns/{turn_id}", "threads.get_turn", {"turn_id": "turn"}),
    E("GET", "/working/{session_id}", "working.entries", SESSION),
    E("GET", "/working/{session_id}/values", "working.get_many", SESSION, query="key=draft"),
    E("GET", "/working/{session_id}/entry", "working.entry", SESSION, query="key=draft"),
    E(
        "PUT",
        "/working/{session_id}/entry",
        "working.set",
        SESSION,
        lambda t: {"value": {"step": 2}, "ttl_s": 60},
        ("session",),
        ok=204,
        query="key=k",
    ),
    E(
        "POST",
        "/working/{session_id}/entry/touch",
        "working.touch",
        SESSION,
        lambda t: {"ttl_s": 60},
        ("session",),
        query="key=draft",
    ),
    E(
        "DELETE",
        "/working/{session_id}/entry",
        "working.delete",
        SESSION,
        fresh=("session",),
        query="key=draft",
    ),
    E("DELETE", "/working/{session_id}", "working.clear", SESSION, fresh=("session",)),
    E("GET", "/procedures", "procedures.current"),
    E("GET", "/procedures/rendered", "procedures.render_for_context"),
    E("GET", "/procedures/history", "procedures.history"),
    E("POST", "/procedures", "procedures.publish", body=lambda t: {"documents": PROCEDURES}),
    E("GET", "/audit", "audit.latest"),
    E("GET", "/notes/{digest}", "notes.read", {"digest": "note"}),
    E("DELETE", "/notes/{digest}", "notes.erase", {"digest": "note"}, fresh=("note",), ok=204),
    E("GET", "/webhooks/allowlist", "webhooks.allowlist"),
    E(
        "POST",
        "/webhooks/allowlist",
        "webhooks.allow",
        body=lambda t: {"prefix": "https://hooks.example/"},
        ok=204,
    ),
    E(
        "DELETE",
        "/webhooks/allowlist",
        "webhooks.disallow",
        {"prefix": "prefix"},
        fresh=("prefix",),
        ok=204,
        query="prefix={prefix}",
    ),
    E("GET", "/webhooks/secret", "webhooks.signing_secret"),
    E("GET", "/webhooks/endpoints", "webhooks.endpoints"),
    E(
        "POST",
        "/webhooks/endpoints",
        "webhooks.add_endpoint",
        body=lambda t: {"url": f"{HOOKS}x", "events": ["run.stuck"]},
        ok=201,
    ),
    E(
        "DELETE",
        "/webhooks/endpoints/{endpoint_id}",
        "webhooks.remove_endpoint",
        {"endpoint_id": "endpoint"},
        fresh=("endpoint",),
        ok=204,
    ),
    E("GET", "/webhooks/deliveries", "webhooks.deliveries"),
    # The delivery is pending: retrying it is a conflict, found after the permission check.
    E(
        "POST",
        "/webhooks/deliveries/{delivery_id}/retry",
        "webhooks.retry",
        {"delivery_id": "delivery"},
        ok=409,
    ),
    E(
        "POST",
        "/webhooks/notify",
        "webhooks.notify",
        body=lambda t: {"event": "run.stuck", "subject": t["run"], "data": {"cause": "test"}},
        fresh=("run",),
    ),
    E("GET", "/principals", "tenants.principals"),
    E(
        "PUT",
        "/principals/{principal_id}",
        "tenants.grant",
        {"principal_id": "newcomer"},
        lambda t: {"roles": ["viewer"]},
    ),
    E(
        "POST",
        "/api-keys",
        "api_keys.create",
        body=lambda t: {"principal_id": SHARED, "roles": ["agent"]},
        ok=201,
    ),
    E("GET", "/api-keys", "api_keys.all"),
    E(
        "POST",
        "/api-keys/{key_id}/revoke",
        "api_keys.revoke",
        {"key_id": "api_key"},
        None,
        ("api_key",),
    ),
]

ACTORS = (
    [(OWN, role) for role in Role]
    + [(OTHER, role) for role in Role]
    + [(GLOBAL_TENANT, Role.ADMIN)]
)


class Served:
    """The matrix's :class:`World`, an API key for each actor, and a client of the API."""

    def __init__(self, world: World) -> None:
        self.world = world
        app = world.app
        self.keys: dict[tuple[str, Role], str] = {}
        for tenant in (OWN, OTHER):
            admin = world.who[(tenant, Role.ADMIN)]
            app.tenants.grant(admin, SHARED, ["agent"])
            for role in Role:
                who = world.who[(tenant, role)]
                self.keys[(tenant, role)] = app.api_keys.create(admin, who.principal_id).secret
        platform = world.platform
        self.keys[(GLOBAL_TENANT, Role.ADMIN)] = app.api_keys.create(
            platform, platform.principal_id
        ).secret
        self.made = 0
        self.api = create_app(app, workflows=REGISTRY)
        self.client = TestClient(self.api)

    def who(self, tenant: str, role: Role) -> Principal:
        if tenant == GLOBAL_TENANT:
            return self.world.platform
        return self.world.who[(tenant, role)]

    def targets(self, fresh: tuple[str, ...]) -> dict[str, str]:
        world = self.world
        if not fresh:
            return self.fixed
        made: dict[str, Callable[[], str]] = {
            "run": world.run,
            "scheduled": world.scheduled,
            "cancelled": world.cancelled,
            "clarification": lambda: world.wait("clarification_required"),
            "external": lambda: world.wait("external_dependency"),
            "review": lambda: world.wait("human_review"),
            "approval": lambda: world.wait("approval"),
            "memory": world.memory,
            "tenant_memory": lambda: world.memory(Scope.TENANT),
            "thread": world.thread,
            "held": lambda: world.memory(Scope.TENANT, held=True),
            "api_key": world.api_key,
            "session": world.session,
            "endpoint": world.endpoint,
            "held_run": world.held_run,
            "note": world.note,
            "policy": self.policy,
            "prefix": self.prefix,
        }
        return {**self.fixed, **{name: made[name]() for name in fresh}}

    @property
    def fixed(self) -> dict[str, str]:
        return {
            **self.world.shared,
            "newcomer": NEWCOMER,
            "workflow": "asking",
            "ref": "call-1",
            "policy": "no-policy",
            "prefix": "https://nowhere.example/",
        }

    def policy(self) -> str:
        """A workflow with a retention policy of its own, to remove."""
        self.made += 1
        self.world.app.retention.set_policy(self.world.admin, f"workflow-{self.made}", 30)
        return f"workflow-{self.made}"

    def prefix(self) -> str:
        """A prefix on acme's webhook allowlist, to remove."""
        self.made += 1
        self.world.app.webhooks.allow(self.world.admin, f"https://gone-{self.made}.example/")
        return f"https://gone-{self.made}.example/"

    def call(self, endpoint: Endpoint, key: str | None, targets: dict[str, str]) -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
        body = endpoint.body(targets) if endpoint.body is not None else None
        return self.client.request(
            endpoint.method, endpoint.url(targets), headers=headers, json=body
        )


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def served(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    test_key_file: Path,
) -> Iterator[Served]:
    """One database per backend for every cell."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('http') / 'tether.db'}"
        Tether.migrate(load_settings(url=url, key_file=test_key_file))[0].close()
        dbname = None
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        template: str = request.getfixturevalue("postgres_template")
        dbname = server.create_database(template=template)
        url = server.url(dbname)
    app = Tether.open(
        load_settings(url=url, key_file=test_key_file, embedder="none"),
        clock=FakeClock(),
        embedder=HashingEmbedder(),
    )
    try:
        yield Served(World(app, url))
    finally:
        app.close()
        if dbname is not None:
            server.drop_database(dbname)


def api_routes() -> set[tuple[str, str]]:
    """Every (method, route) of the API below ``/api/v1``."""
    found = set()
    for router in API_ROUTERS:
        for route in router.routes:
            if isinstance(route, APIRoute):
                found |= {(method, route.path) for method in route.methods}
    return found


def test_every_endpoint_has_a_row_and_every_row_an_endpoint() -> None:
    rows = {(endpoint.method, endpoint.route) for endpoint in ENDPOINTS}
    assert sorted(api_routes() - rows) == [], "endpoints missing from the matrix"
    assert sorted(rows - api_routes()) == [], "rows naming endpoints that do not exist"
    assert all(endpoint.operation in OPERATIONS for endpoint in ENDPOINTS)


def test_every_operation_a_key_may_call_has_an_endpoint_or_a_documented_reason() -> None:
    """Operations that take no principal (maintenance, files) are beyond any key; every
    other one has an endpoint, or names the endpoint that serves it in
    :data:`NOT_OVER_HTTP`, which docs/http.md lists."""
    served = {endpoint.operation for endpoint in ENDPOINTS}
    by_key = {op for op, permission in OPERATIONS.items() if permission not in NO_PRINCIPAL}
    assert sorted(by_key - served - set(NOT_OVER_HTTP)) == [], "operations without an endpoint"
    assert sorted(set(NOT_OVER_HTTP) & served) == [], "excluded, yet they have an endpoint"
    assert sorted(set(NOT_OVER_HTTP) - by_key) == [], "excluded, yet no key may call them"
    docs = (Path(__file__).resolve().parents[2] / "docs" / "http.md").read_text()
    assert [op for op in NOT_OVER_HTTP if f"`app.{op}`" not in docs] == []


def _allowed(endpoint: Endpoint, who: Principal) -> bool:
    permitted = allows(who, OPERATIONS[endpoint.operation])
    return permitted and (endpoint.rule is None or endpoint.rule(who))


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.label for e in ENDPOINTS])
def test_each_role_in_its_own_tenant_gets_what_the_map_says(
    served: Served, endpoint: Endpoint
) -> None:
    wrong = []
    for role in Role:
        who = served.who(OWN, role)
        targets = served.targets(endpoint.fresh)
        before = served.world.audit_length()
        response = served.call(endpoint, served.keys[(OWN, role)], targets)
        expected = endpoint.ok if _allowed(endpoint, who) else 403
        if response.status_code != expected:
            wrong.append(f"{role.value}: {response.status_code}, {expected} expected")
        if expected == 403 and served.world.audit_length() != before:
            wrong.append(f"{role.value}: refused but the trail grew")
    assert wrong == [], endpoint.label


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.label for e in ENDPOINTS])
def test_no_key_of_another_tenant_reaches_this_ones_objects(
    served: Served, endpoint: Endpoint
) -> None:
    wrong = []
    for tenant, role in ACTORS[len(Role) :]:
        who = served.who(tenant, role)
        targets = served.targets(endpoint.fresh)
        before = served.world.audit_length()
        response = served.call(endpoint, served.keys[(tenant, role)], targets)
        permitted = allows(who, OPERATIONS[endpoint.operation])
        status, text = response.status_code, response.text
        if not permitted and status != 403:
            wrong.append(f"{tenant}/{role.value}: {status}, 403 expected")
        elif permitted and status not in (endpoint.ok, 404, 403):
            wrong.append(f"{tenant}/{role.value}: {status}")
        elif permitted and status == 403 and endpoint.rule is None:
            wrong.append(f"{tenant}/{role.value}: refused though its role may")
        if "acme" in text:
            wrong.append(f"{tenant}/{role.value}: saw acme's data: {text[:200]}")
        if served.world.audit_length() != before:
            wrong.append(f"{tenant}/{role.value}: wrote to acme's trail")
    assert wrong == [], endpoint.label


def test_every_endpoint_refuses_a_missing_malformed_or_revoked_key(served: Served) -> None:
    app = served.world.app
    made = app.api_keys.create(served.world.admin, SHARED)
    app.api_keys.revoke(served.world.admin, made.key.key_id)
    wrong = []
    for endpoint in ENDPOINTS:
        for key in (None, "not-a-key", made.secret, made.secret[:-1] + "0"):
            response = served.call(endpoint, key, served.targets(()))
            problem = response.json() if response.status_code == 401 else {}
            if response.status_code != 401 or problem.get("code") != "unauthenticated":
                wrong.append(f"{endpoint.label} with {key and key[:12]}: {response.status_code}")
            elif response.headers["content-type"] != "application/problem+json":
                wrong.append(f"{endpoint.label}: {response.headers['content-type']}")
    assert wrong == []
