"""The HTTP API as a client uses it, on each backend: a run started, approved and finished
over HTTP; pages that neither repeat nor skip; errors with their codes and statuses; the
body limit."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conformance.test_permission_map import REGISTRY
from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.server import create_app

LIMIT = 4096


@dataclass
class Api:
    app: Tether
    client: TestClient
    clock: FakeClock
    keys: dict[str, str]

    def as_(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[who]}"}

    def get(self, who: str, path: str, **params: Any) -> Any:
        return self.client.get(f"/api/v1{path}", headers=self.as_(who), params=params)

    def post(self, who: str, path: str, body: Any = None) -> Any:
        return self.client.post(f"/api/v1{path}", headers=self.as_(who), json=body)


@pytest.fixture
def api(backend: TestDatabase) -> Iterator[Api]:
    """acme with admin ann, agent bot and approver sue; globex with admin gil."""
    clock = FakeClock()
    with Tether.open(backend.settings(), clock=clock) as app:
        app.tenants.create("acme", admin="ann")
        app.tenants.create("globex", admin="gil")
        ann = app.tenants.principal("acme", "ann")
        app.tenants.grant(ann, "bot", ["agent"])
        app.tenants.grant(ann, "sue", ["approver"])
        keys = {who: app.api_keys.create(ann, who).secret for who in ("ann", "bot", "sue")}
        gil = app.tenants.principal("globex", "gil")
        keys["gil"] = app.api_keys.create(gil, "gil").secret
        client = TestClient(create_app(app, workflows=REGISTRY, max_body_bytes=LIMIT))
        yield Api(app, client, clock, keys)


def test_a_run_started_over_http_is_approved_there_and_finishes(api: Api) -> None:
    started = api.post("bot", "/runs", {"workflow": "asking", "input": {"reason": "approval"}})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    worker = api.app.executor(REGISTRY, owner="http")
    assert worker.execute("acme", run_id).status.value == "waiting_for_approval"

    inbox = api.get("sue", "/approvals").json()
    [request] = inbox["items"]
    assert request["run_id"] == run_id and request["request"]["action"] == {"refund": 10}
    assert api.post("bot", f"/approvals/{request['wait_id']}/approve").status_code == 403
    decided = api.post("sue", f"/approvals/{request['wait_id']}/approve", {"comment": "ok"})
    assert decided.status_code == 200, decided.text
    again = api.post("sue", f"/approvals/{request['wait_id']}/approve", {})
    assert (again.status_code, again.json()["code"]) == (409, "conflict")

    assert worker.execute("acme", run_id).status.value == "completed"
    assert api.get("bot", f"/runs/{run_id}/state").json()["answer"] == "approved"
    events = [event["type"] for event in api.get("bot", f"/runs/{run_id}/events").json()["items"]]
    assert events[0] == "run.created" and events[-1] == "run.completed"
    assert api.get("sue", "/approvals").json() == {"items": [], "next_cursor": None}


def test_pages_neither_repeat_nor_skip_and_filters_apply(api: Api) -> None:
    started = []
    for number in range(7):
        body = {"workflow": "asking", "input": {"reason": "approval" if number % 2 else "x"}}
        started.append(api.post("bot", "/runs", body).json()["run_id"])
        api.clock.advance(timedelta(minutes=1))
    seen: list[str] = []
    cursor = None
    while True:
        page = api.get("ann", "/runs", limit=3, **({"cursor": cursor} if cursor else {})).json()
        seen += [run["run_id"] for run in page["items"]]
        api.post("bot", "/runs", {"workflow": "asking"})  # newer runs do not shift the pages
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(started))

    middle = api.app.runs.get(api.app.tenants.principal("acme", "ann"), started[3]).created_at
    older = api.get("ann", "/runs", created_before=middle.isoformat(), limit=50).json()
    assert [run["run_id"] for run in older["items"]] == list(reversed(started[:3]))
    assert api.get("ann", "/runs", workflow="nothing").json()["items"] == []
    assert api.get("gil", "/runs").json()["items"] == []
    bad = api.get("ann", "/runs", cursor="not-a-cursor")
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_input")


def test_errors_carry_their_code_and_another_tenants_objects_are_not_found(api: Api) -> None:
    run_id = api.post("bot", "/runs", {"workflow": "asking"}).json()["run_id"]

    foreign = api.get("gil", f"/runs/{run_id}")
    assert foreign.status_code == 404
    assert foreign.headers["content-type"] == "application/problem+json"
    assert foreign.json()["code"] == "not_found"
    assert foreign.json()["type"] == "urn:tether:error:not_found"
    assert "acme" not in foreign.text
    missing = api.get("ann", "/runs/01a20c22-0000-7000-8000-000000000000")
    assert missing.status_code == 404 and missing.json()["detail"] != foreign.json()["detail"]

    refused = api.post("bot", f"/runs/{run_id}/cancel", {"reason": "test"})
    assert (refused.status_code, refused.json()["code"]) == (403, "permission_denied")
    assert api.post("ann", f"/runs/{run_id}/cancel", {"reason": "test"}).status_code == 200
    unreasoned = api.post("ann", f"/runs/{run_id}/cancel", {})
    assert (unreasoned.status_code, unreasoned.json()["code"]) == (422, "invalid_input")
    twice = api.post("ann", f"/runs/{run_id}/cancel", {"reason": "again"})
    assert (twice.status_code, twice.json()["code"]) == (409, "conflict")
    unknown = api.post("bot", "/runs", {"workflow": "nowhere"})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "not_found")
    invalid = api.post("bot", "/runs", {"workflow": "asking", "input": [1]})
    assert (invalid.status_code, invalid.json()["code"]) == (422, "invalid_input")
    nothing = api.client.get("/api/v1/nowhere", headers=api.as_("ann"))
    assert (nothing.status_code, nothing.json()["code"]) == (404, "not_found")


def test_a_body_over_the_limit_is_refused_and_changes_nothing(api: Api) -> None:
    big = {"turns": [{"role": "user", "content": "x" * LIMIT}]}
    thread = api.post("ann", "/threads", {"user_id": "u-1"}).json()["thread_id"]

    declared = api.post("ann", f"/threads/{thread}/turns", big)
    assert declared.status_code == 413
    assert declared.json()["code"] == "request_too_large"

    def chunks() -> Iterator[bytes]:
        yield b'{"turns": [{"role": "user", "content": "'
        for _ in range(8):
            yield b"x" * 1024
        yield b'"}]}'

    streamed = api.client.post(
        f"/api/v1/threads/{thread}/turns",
        headers={**api.as_("ann"), "Content-Type": "application/json"},
        content=chunks(),
    )
    assert streamed.status_code == 413
    assert api.get("ann", f"/threads/{thread}/turns").json()["items"] == []
