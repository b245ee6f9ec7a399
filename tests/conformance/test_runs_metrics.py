"""The metrics endpoint: after a scripted sequence of runs, a scrape shows each series with
the value the sequence implies (database-wide figures and the worker's own counts)."""

from __future__ import annotations

import contextlib
import urllib.request
from datetime import timedelta

from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.runs import END, RetryPolicy, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.prometheus import metrics_registry, serve_metrics
from tether.runs.worker import Worker


class Step(BaseModel):
    minutes: int = 0


class Crash(BaseException):
    """A worker killed mid-node: nothing in the engine catches it."""


done_flow: Workflow[Step] = Workflow("done", state=Step)


@done_flow.node(start=True)
def finish(ctx: RunContext, state: Step) -> str:
    return END


boom_flow: Workflow[Step] = Workflow("boom", state=Step)


@boom_flow.node(start=True, retry=RetryPolicy(max_attempts=2, backoff_s=60, jitter=0))
def explode(ctx: RunContext, state: Step) -> str:
    raise RuntimeError("the service is down")


approve_flow: Workflow[Step] = Workflow("approve", state=Step)


@approve_flow.node(start=True)
def ask(ctx: RunContext, state: Step) -> str:
    ctx.approval({"pay": 1}, rationale="r", expires_in=timedelta(minutes=state.minutes))
    return END


CRASHES = {"left": 1}
crash_flow: Workflow[Step] = Workflow("crash", state=Step)


@crash_flow.node(start=True)
def die_once(ctx: RunContext, state: Step) -> str:
    if CRASHES["left"]:
        CRASHES["left"] -= 1
        raise Crash()
    return END


REGISTRY = WorkflowRegistry(done_flow, boom_flow, approve_flow, crash_flow)


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return values


def test_a_scrape_shows_every_series_after_a_scripted_sequence(backend: TestDatabase) -> None:
    CRASHES["left"] = 1
    clock = FakeClock()
    with Tether.open(backend.settings(), clock=clock) as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.tenants.grant(alice, "bot", ["agent"])
        bot = app.tenants.principal("acme", "bot")
        crashing = app.runs.start(bot, crash_flow, Step())
        with contextlib.suppress(Crash):
            app.executor(REGISTRY, owner="dead").execute("acme", crashing.run_id)
        clock.advance(timedelta(minutes=1))
        app.runs.start(bot, done_flow, Step())
        app.runs.start(bot, boom_flow, Step())
        app.runs.start(bot, approve_flow, Step(minutes=30))
        app.runs.start(bot, approve_flow, Step(minutes=3 * 24 * 60))
        worker = Worker(app.executor(REGISTRY, owner="w1"), app.runs)
        assert worker.run(until_idle=True) == 4  # done, boom (retry scheduled), 2 approvals
        parked = clock.now()
        clock.advance(timedelta(seconds=30))
        assert worker.run(until_idle=True) == 1  # the crashed run, its lease run out
        clock.advance(timedelta(seconds=40))
        assert worker.run(until_idle=True) == 1  # boom's second attempt fails for good
        app.runs.start(bot, done_flow, Step())  # queued, not yet claimed

        server = serve_metrics(metrics_registry(app.storage, app.clock, [worker]), 0)
        try:
            values = scrape(server.server_port)
        finally:
            server.shutdown()

    def value(name: str, **labels: str) -> float:
        return values[(name, tuple(sorted(labels.items())))]

    assert value("tether_metrics_database_up") == 1
    expected = {
        RunStatus.COMPLETED: 2,
        RunStatus.FAILED: 1,
        RunStatus.WAITING_FOR_APPROVAL: 2,
        RunStatus.QUEUED: 1,
    }
    for status in RunStatus:
        assert value("tether_runs", status=status.value) == expected.get(status, 0), status
    assert value("tether_runs_queue_depth") == 1
    assert value("tether_approvals_pending") == 2
    assert value("tether_approvals_expiring") == 1
    assert value("tether_runs_failed_by_node", node="explode") == 1
    assert value("tether_runs_oldest_running_age_seconds") == 0
    assert value("tether_runs_longest_waiting_seconds") == (clock.now() - parked).total_seconds()
    assert value("tether_worker_claims_total", worker="w1") == 6
    assert value("tether_worker_lease_takeovers_total", worker="w1") == 1
    assert value("tether_worker_retries_total", worker="w1") == 1
    assert value("tether_worker_heartbeats_total", worker="w1") == 0
    assert value("tether_worker_storage_retries_total", worker="w1") == 0
