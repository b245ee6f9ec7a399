"""The operator's and the administrator's endpoints as a client uses them, on each
backend: run retention with a legal hold and ``gc`` (dry run, then for real), the notes a
hold's reason is kept in, webhooks from the allowlist to the delivery log, a session's
working memory, and the memory policy's read-access table deciding what a viewer lists."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from tests.conformance.test_run_retention import Notes, workflow
from tests.e2e.http_support import Keyed
from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.runs import RunStatus, WorkflowRegistry
from tether.server import create_app

REPORTS = workflow("reports")


@dataclass
class Api(Keyed):
    app: Tether
    clock: FakeClock


@pytest.fixture
def api(backend: TestDatabase) -> Iterator[Api]:
    """acme with admin ann, operator olga and viewer vic."""
    clock = FakeClock()
    settings = backend.settings()
    with Tether.open(settings, clock=clock, embedder=HashingEmbedder()) as app:
        app.tenants.create("acme", admin="ann")
        ann = app.tenants.principal("acme", "ann")
        app.tenants.grant(ann, "olga", ["operator"])
        app.tenants.grant(ann, "vic", ["viewer"])
        keys = {who: app.api_keys.create(ann, who).secret for who in ("ann", "olga", "vic")}
        client = TestClient(create_app(app, workflows=WorkflowRegistry(REPORTS)))
        yield Api(client, keys, app, clock)


def _finished_runs(api: Api, count: int) -> list[str]:
    ann = api.app.tenants.principal("acme", "ann")
    worker = api.app.executor(WorkflowRegistry(REPORTS), owner="http")
    ids = []
    for _ in range(count):
        run_id = api.app.runs.start(ann, REPORTS, Notes()).run_id
        assert worker.execute("acme", run_id).status is RunStatus.COMPLETED
        ids.append(run_id)
    return ids


def test_gc_compacts_what_the_policy_says_and_never_a_held_run(api: Api) -> None:
    kept, held = _finished_runs(api, 2)
    assert api.call("PUT", "olga", "/retention/policies/reports", {"keep_days": 1}).status_code == (
        403
    )
    assert api.ok("PUT", "ann", "/retention/policies/reports", {"keep_days": 1}) == {
        "workflow": "reports",
        "keep_days": 1,
    }
    assert api.ok("GET", "vic", "/retention/policies") == {"reports": 1}
    assert api.ok("POST", "ann", f"/runs/{held}/holds", {"reason": "litigation 7"})["hold_id"]
    [hold] = api.ok("GET", "vic", "/retention/holds")
    assert hold["run_id"] == held
    api.clock.advance(timedelta(days=2))
    events = len(api.ok("GET", "vic", f"/runs/{kept}/events", limit=500)["items"])

    dry = api.ok("POST", "olga", "/gc", {"dry_run": True})
    assert (dry["dry_run"], dry["compacted"], dry["held"]) == (True, 1, 1)
    assert len(api.ok("GET", "vic", f"/runs/{kept}/events", limit=500)["items"]) == events
    done = api.ok("POST", "olga", "/gc", {"batch": 1})
    assert (done["compacted"], done["deleted"]["run_events"]) == (1, dry["deleted"]["run_events"])
    assert len(api.ok("GET", "vic", f"/runs/{kept}/events", limit=500)["items"]) < events
    assert len(api.ok("GET", "vic", f"/runs/{held}/events", limit=500)["items"]) > 1

    note = api.ok("GET", "olga", f"/notes/{hold['note_digest']}")
    assert note["text"] == "litigation 7"
    assert api.call("GET", "vic", f"/notes/{hold['note_digest']}").status_code == 403
    released = api.ok("POST", "ann", f"/runs/{held}/holds/release", {"reason": "settled"})
    assert released == {"released": 1}
    again = api.call("POST", "ann", f"/runs/{held}/holds/release", {"reason": "settled"})
    assert again.status_code == 409
    assert api.call("DELETE", "ann", f"/notes/{hold['note_digest']}").status_code == 204
    assert api.call("GET", "olga", f"/notes/{hold['note_digest']}").status_code == 404
    assert api.call("DELETE", "ann", "/retention/policies/reports").status_code == 204
    assert api.call("DELETE", "ann", "/retention/policies/reports").status_code == 404
    report = api.ok("POST", "olga", "/housekeeping/run")
    assert report["tenant_id"] == "acme" and "compacted" in str(report["runs"])


def test_webhooks_from_the_allowlist_to_the_delivery_log(api: Api) -> None:
    [run_id] = _finished_runs(api, 1)
    off_list = api.call("POST", "olga", "/webhooks/endpoints", {"url": "https://hooks.example/in"})
    assert off_list.status_code == 403
    assert api.call(
        "POST", "olga", "/webhooks/allowlist", {"prefix": "https://x/"}
    ).status_code == (403)
    assert api.call("POST", "ann", "/webhooks/allowlist", {"prefix": "https://hooks.example/"})
    assert api.ok("GET", "vic", "/webhooks/allowlist") == ["https://hooks.example/"]
    endpoint = api.ok("POST", "olga", "/webhooks/endpoints", {"url": "https://hooks.example/in"})
    assert [e["endpoint_id"] for e in api.ok("GET", "vic", "/webhooks/endpoints")] == [
        endpoint["endpoint_id"]
    ]
    body = {"event": "run.stuck", "subject": run_id, "data": {"cause": "lease_expired"}}
    assert api.ok("POST", "olga", "/webhooks/notify", body) == {"queued": 1}
    assert api.ok("POST", "olga", "/webhooks/notify", body) == {"queued": 0}
    [delivery] = api.ok("GET", "vic", "/webhooks/deliveries", status="pending")
    assert (delivery["event"], delivery["endpoint_id"]) == ("run.stuck", endpoint["endpoint_id"])
    pending = api.call("POST", "olga", f"/webhooks/deliveries/{delivery['delivery_id']}/retry")
    assert pending.status_code == 409
    assert len(api.ok("GET", "ann", "/webhooks/secret")["secret"]) == 64
    assert api.call("GET", "olga", "/webhooks/secret").status_code == 403

    removed = api.call("DELETE", "olga", f"/webhooks/endpoints/{endpoint['endpoint_id']}")
    assert removed.status_code == 204 and api.ok("GET", "vic", "/webhooks/endpoints") == []
    gone = api.call("DELETE", "ann", "/webhooks/allowlist", prefix="https://hooks.example/")
    assert gone.status_code == 204 and api.ok("GET", "vic", "/webhooks/allowlist") == []


def test_a_sessions_working_memory_over_http(api: Api) -> None:
    session = "thread-7"  # a key travels in the query, so it may hold a slash
    path = f"/working/{session}"
    assert api.call("GET", "olga", f"{path}/entry", key="a/b").status_code == 404
    assert api.call("PUT", "vic", f"{path}/entry", {"value": 1}, key="a/b").status_code == 403
    put = api.call("PUT", "olga", f"{path}/entry", {"value": {"step": 2}, "ttl_s": 60}, key="a/b")
    assert put.status_code == 204
    api.ok("PUT", "olga", f"{path}/entry", {"value": "kept"}, key="plan")
    entry = api.ok("GET", "vic", f"{path}/entry", key="a/b")
    assert entry["value"] == {"step": 2} and entry["expires_at"] is not None
    assert api.ok("GET", "vic", f"{path}/values", key=["a/b", "plan", "none"]) == {
        "a/b": {"step": 2},
        "plan": "kept",
    }
    assert api.ok("POST", "olga", f"{path}/entry/touch", {"ttl_s": None}, key="a/b") == {
        "changed": True
    }
    api.clock.advance(timedelta(hours=1))
    assert [e["key"] for e in api.ok("GET", "vic", path)] == ["a/b", "plan"]
    assert api.ok("DELETE", "olga", f"{path}/entry", key="plan") == {"changed": True}
    assert api.ok("DELETE", "olga", path) == {"removed": 1}
    assert api.ok("GET", "vic", path) == []


def test_the_read_access_table_decides_what_a_viewer_lists(api: Api) -> None:
    ann = api.app.tenants.principal("acme", "ann")
    api.app.memory.propose(
        ann,
        MemoryProposal(
            text="The claimant owns a cargo bike",
            scope=Scope.USER,
            scope_id="u-1",
            source_type=SourceType.HUMAN,
            confidence=0.9,
        ),
    )
    listed = api.ok("GET", "vic", "/memory", scope=["user:u-1"])
    assert [m["text"] for m in listed] == ["The claimant owns a cargo bike"]

    policy = api.ok("GET", "vic", "/memory/policy")
    assert policy["read_access"] == {}
    policy["read_access"] = {"viewer": {"scopes": ["tenant"], "clearance": "public"}}
    assert api.call("PUT", "olga", "/memory/policy", policy).status_code == 403
    assert api.ok("PUT", "ann", "/memory/policy", policy)["read_access"]["viewer"]["scopes"] == [
        "tenant"
    ]
    assert api.ok("GET", "vic", "/memory", scope=["user:u-1"]) == []
    assert api.ok("GET", "olga", "/memory", scope=["user:u-1"]) != []
    bad = api.call("PUT", "ann", "/memory/policy", {"read_access": {"viewer": {"scopes": []}}})
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_input")
    assert api.ok("GET", "vic", "/memory/policy")["read_access"]["viewer"]["clearance"] == "public"
