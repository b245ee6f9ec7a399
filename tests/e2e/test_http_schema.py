"""The HTTP API against its own OpenAPI description.

schemathesis generates requests for every operation from ``/openapi.json`` and sends them
in process (ASGI), once with a valid admin key and once without a key: no answer may be a
server error, and every answer must be one the description declares (status code, content
type and body schema). A second test fails when an endpoint lacks a summary or a
description, so the published description is complete.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.openapi import from_asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conformance.test_permission_map import REGISTRY, Ask
from tether import Tether
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.server import create_app
from tether.threads import NewTurn
from tether.webhooks.models import WebhookEvent

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES = 15
"""Examples per operation and key: enough to reach every parameter, under a minute."""


@dataclass(frozen=True)
class Served:
    schema: Any
    key: str
    known: dict[str, str]
    """Path parameter -> an object of the tenant, so requests also reach real objects."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, test_key_file: Path) -> Iterator[Served]:
    """An API over a SQLite database with one tenant, its admin, a run waiting for an
    approval (and under a legal hold), a memory, a thread with a turn and working memory,
    and a webhook endpoint with a delivery."""
    url = f"sqlite:///{tmp_path_factory.mktemp('schema') / 'tether.db'}"
    app, _ = Tether.migrate(url=url)
    try:
        app.tenants.create("acme", admin="ann")
        admin = app.tenants.principal("acme", "ann")
        run = app.runs.start(admin, REGISTRY.get("asking"), Ask(reason="approval"))
        parked = app.executor(REGISTRY, owner="schema").execute("acme", run.run_id)
        memory = app.memory.propose(
            admin,
            MemoryProposal(
                text="The claimant owns a cargo bike",
                scope=Scope.USER,
                scope_id="u-1",
                source_type=SourceType.HUMAN,
            ),
        )
        thread = app.threads.create(admin, "u-1", title="claim")
        [turn] = app.threads.append_many(
            admin, thread.thread_id, [NewTurn(role="user", content="hi", ref="call-1")]
        )
        app.working.set(admin, thread.thread_id, "draft", {"step": 1})
        app.retention.hold(admin, run.run_id, reason="a case")
        app.webhooks.allow(admin, "https://hooks.example/")
        endpoint = app.webhooks.add_endpoint(admin, "https://hooks.example/in")
        app.webhooks.notify(admin, WebhookEvent.RUN_STUCK, run.run_id, {})
        known = {
            "run_id": run.run_id,
            "wait_id": str(parked.wait_id),
            "approval_id": str(parked.wait_id),
            "memory_id": str(memory.memory_id),
            "thread_id": thread.thread_id,
            "session_id": thread.thread_id,
            "turn_id": turn.turn_id,
            "ref": "call-1",
            "digest": app.notes.digest("acme", "a case"),
            "endpoint_id": endpoint.endpoint_id,
            "delivery_id": app.webhooks.deliveries(admin)[0].delivery_id,
            "workflow": "asking",
        }
        key = app.api_keys.create(admin, "ann").secret
        api = create_app(app, workflows=REGISTRY)
        yield Served(from_asgi("/openapi.json", api), key, known)
    finally:
        app.close()


@pytest.mark.parametrize(
    ("with_key", "objects"),
    [(True, "random"), (True, "real"), (False, "random")],
    ids=["with a key", "with a key, real objects", "without a key"],
)
@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda mode: mode.value)
def test_no_request_gets_a_server_error_or_an_undeclared_answer(
    served: Served, with_key: bool, objects: str, mode: GenerationMode
) -> None:
    """Valid requests (``positive``) and requests the description forbids (``negative``),
    naming random ids or the tenant's real objects."""
    headers = {"Authorization": f"Bearer {served.key}"} if with_key else {}
    failures = []
    for operation in [result.ok() for result in served.schema.get_all_operations()]:
        names = [parameter.name for parameter in operation.path_parameters]
        if objects == "real" and not names:
            continue
        known = {name: served.known[name] for name in names if name in served.known}
        if objects == "real" and len(known) < len(names):
            continue

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode, path_parameters=known or None))
        def exchange(case: Any) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            exchange()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE, operation.label  # nothing to get wrong
        except Exception as exc:
            failures.append(f"{operation.label}: {exc}"[:2000])
    assert failures == [], "\n\n".join(failures)


def test_every_endpoint_has_a_summary_and_a_description(tmp_path: Path) -> None:
    app, _ = Tether.migrate(url=f"sqlite:///{tmp_path / 'docs.db'}")
    with app:
        document = create_app(app).openapi()
    assert document["openapi"].startswith("3.1")
    lacking = [
        f"{method.upper()} {path}: {'summary' if not op.get('summary') else 'description'}"
        for path, item in document["paths"].items()
        for method, op in item.items()
        if not op.get("summary") or len(op.get("description", "").split()) < 5
    ]
    assert lacking == [], "endpoints without a summary or a description in the OpenAPI"
