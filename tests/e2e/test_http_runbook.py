"""The recovery runbook over HTTP, on each backend: a failed payout inspected, refused a
node retry that would pay twice, retried on the fixed version without paying twice; a
fork refused with the effects it would repeat listed in the problem, then made; a node
completed by hand with a wrong output (422, nothing changed) and a right one; pause,
resume and skip, each in the run's events and the audit trail with its reason's digest."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conformance.test_runbook_fork import Payout, payout_v1, payout_v2
from tests.e2e.http_support import Keyed
from tests.runs_support import CaseService
from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.runs import RunStatus, WorkflowRegistry
from tether.server import create_app


@dataclass
class Api(Keyed):
    app: Tether
    registry: WorkflowRegistry
    service: CaseService

    def post(self, who: str, path: str, body: Any = None) -> Any:
        return self.call("POST", who, f"/runs/{path}", body)

    def get(self, who: str, path: str, **params: Any) -> Any:
        return self.ok("GET", who, f"/runs/{path}", **params)

    def start(self, *, bug: bool = False) -> str:
        registry = WorkflowRegistry(payout_v1(self.service, bug=bug)) if bug else self.registry
        ann = self.app.tenants.principal("acme", "ann")
        run_id = self.app.runs.start(ann, registry.get("payout", 1), Payout()).run_id
        worker = self.app.executor(registry, owner="http")
        for _ in range(2 if bug else 1):  # ``pay`` is tried twice before the run fails
            worker.execute("acme", run_id)
        return run_id

    def events(self, run_id: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.get("ann", f"{run_id}/events", limit=500)["items"]
        return items


@pytest.fixture
def api(backend: TestDatabase) -> Iterator[Api]:
    """acme with admin ann, operator olga and viewer vic; the server knows payout v1 and
    v2 (the fix of a bug that fails v1's ``pay`` after its transfer)."""
    service = CaseService()
    registry = WorkflowRegistry(payout_v1(service), payout_v2(service))
    with Tether.open(backend.settings(), clock=FakeClock()) as app:
        app.tenants.create("acme", admin="ann")
        ann = app.tenants.principal("acme", "ann")
        app.tenants.grant(ann, "olga", ["operator"])
        app.tenants.grant(ann, "vic", ["viewer"])
        keys = {who: app.api_keys.create(ann, who).secret for who in ("ann", "olga", "vic")}
        client = TestClient(create_app(app, workflows=registry))
        yield Api(client, keys, app, registry, service)


def test_a_failed_run_is_inspected_and_retried_on_the_fix_without_paying_twice(api: Api) -> None:
    run_id = api.start(bug=True)
    seen = api.get("olga", f"{run_id}/inspect")
    assert seen["run"]["status"] == "failed" and seen["run"]["current_node"] == "pay"
    [transfer] = seen["visit_effects"]
    assert (transfer["name"], transfer["outcome"]) == ("transfer", "applied")
    assert any("retry" in command for command in seen["suggested"])

    refused = api.post("olga", f"{run_id}/retry-node", {"reason": "try the node afresh"})
    assert (refused.status_code, refused.json()["code"]) == (409, "conflict")
    problem = refused.json()
    assert problem["effects"] == [f"transfer ({transfer['idempotency_key']}): applied"]
    assert "rerun_effects" in problem["detail"]
    assert api.post("vic", f"{run_id}/retry", {"reason": "x"}).status_code == 403
    assert api.post("olga", f"{run_id}/retry", {}).status_code == 422

    retried = api.post(
        "olga", f"{run_id}/retry", {"reason": "currency bug fixed in v2", "to_version": 2}
    )
    assert retried.status_code == 200, retried.text
    assert (retried.json()["status"], retried.json()["workflow_version"]) == ("queued", 2)
    done = api.app.executor(api.registry, owner="http").execute("acme", run_id)
    assert done.status is RunStatus.COMPLETED
    assert [api.service.calls[key] for key in api.service.keys_for("transfer")] == [1]
    [event] = [e for e in api.events(run_id) if e["type"] == "run.retried"]
    digest = api.app.notes.digest("acme", "currency bug fixed in v2")
    assert (event["data"]["to_version"], event["data"]["reason"]) == (2, digest)


def test_a_fork_lists_the_effects_it_would_repeat_and_needs_the_flag(api: Api) -> None:
    run_id = api.start()
    plan = api.get("olga", f"{run_id}/fork-plan", checkpoint=1)
    assert plan["node"] == "pay"
    assert [r["effect"]["name"] for r in plan["rerun"]] == ["transfer", "notify"]
    runs_before = len(api.app.runs.all(api.app.tenants.principal("acme", "ann")))

    body = {"reason": "redo with 250", "checkpoint": 1, "patch": {"amount": 250}}
    refused = api.post("olga", f"{run_id}/fork", body)
    assert refused.status_code == 409
    assert [line.split(" ")[0] for line in refused.json()["effects"]] == ["transfer", "notify"]
    assert len(api.app.runs.all(api.app.tenants.principal("acme", "ann"))) == runs_before

    forked = api.post("olga", f"{run_id}/fork", {**body, "rerun_effects": True})
    assert forked.status_code == 201, forked.text
    fork_id = forked.json()["run"]["run_id"]
    assert forked.json()["run"]["status"] == "queued" and fork_id != run_id
    assert api.app.executor(api.registry, owner="http").execute("acme", fork_id).status.value == (
        "completed"
    )
    assert api.get("olga", f"{fork_id}/state")["transfer"]["amount"] == 250
    assert api.get("olga", f"{run_id}/state")["transfer"]["amount"] == 100
    missing = api.call("GET", "olga", f"/runs/{run_id}/fork-plan", checkpoint=9)
    assert missing.status_code == 404


def test_a_node_completed_by_hand_checks_its_output(api: Api) -> None:
    run_id = api.start(bug=True)
    events = len(api.events(run_id))
    wrong = api.post(
        "olga", f"{run_id}/complete", {"reason": "paid by phone", "output": {"amount": "lots"}}
    )
    assert (wrong.status_code, wrong.json()["code"]) == (422, "invalid_input")
    assert "amount" in wrong.json()["detail"]
    assert len(api.events(run_id)) == events
    unknown = api.post(
        "olga", f"{run_id}/complete", {"reason": "r", "output": {}, "next_node": "nowhere"}
    )
    assert unknown.status_code == 422

    done = api.post(
        "olga",
        f"{run_id}/complete",
        {"reason": "paid by phone", "output": {"notified": {"by": "phone"}}, "comment": "ok"},
    )
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"
    assert api.get("olga", f"{run_id}/state")["notified"] == {"by": "phone"}
    again = api.post("olga", f"{run_id}/complete", {"reason": "again", "output": {}})
    assert again.status_code == 409


def test_pause_resume_and_skip_land_in_the_events_and_the_trail(api: Api) -> None:
    ann = api.app.tenants.principal("acme", "ann")
    run_id = api.app.runs.start(ann, api.registry.get("payout", 1), Payout()).run_id

    paused = api.post("olga", f"{run_id}/pause", {"reason": "the bank is down"})
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert api.post("olga", f"{run_id}/pause", {"reason": "twice"}).status_code == 409
    resumed = api.post("olga", f"{run_id}/resume", {"reason": "the bank is back"})
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    assert api.post("olga", f"{run_id}/pause", {"reason": "down again"}).status_code == 200
    skipped = api.post("olga", f"{run_id}/skip", {"reason": "checked by hand", "next_node": "pay"})
    assert skipped.status_code == 200, skipped.text
    assert (skipped.json()["status"], skipped.json()["current_node"]) == ("queued", "pay")

    types = [e["type"] for e in api.events(run_id)]
    assert types[-4:] == ["run.paused", "run.resumed", "run.paused", "node.skipped"]
    trail = api.call("GET", "ann", "/audit", target=f"run:{run_id}")
    actions = [entry["action"] for entry in trail.json()["items"]]
    assert actions[:-1] == ["run.node_skipped", "run.paused", "run.resumed", "run.paused"]
    assert "the bank" not in trail.text
