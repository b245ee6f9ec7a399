"""``tether worker --concurrency N --metrics-port P``: one process runs several workers,
an idle one is woken by new runs, and the endpoint reports what they did; SIGTERM ends it
cleanly. On both backends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.worker_workflow import Count, chain
from tests.support import TestDatabase
from tether.runs import RunStatus

ROOT = Path(__file__).resolve().parents[2]
RUNS = 12


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_worker_process_of_three_runs_every_run_and_reports_it(backend: TestDatabase) -> None:
    with backend.open() as app:
        app.tenants.create("acme", admin="alice")
        app.tenants.grant(app.tenants.principal("acme", "alice"), "bot", ["agent"])
    port = free_port()
    env = {
        **os.environ,
        "TETHER_URL": backend.url,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tether",
            "worker",
            "--workflows",
            "tests.e2e.worker_workflow:registry",
            "--concurrency",
            "3",
            "--metrics-port",
            str(port),
            "--poll",
            "60",
            "--owner",
            "w",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        values = None
        while values is None and time.monotonic() < deadline:
            try:
                values = scrape(port)
            except OSError:
                time.sleep(0.1)
        assert values is not None, "the metrics endpoint never answered"
        with backend.open() as app:
            bot = app.tenants.principal("acme", "bot")
            runs = [app.runs.start(bot, chain, Count()) for _ in range(RUNS)]
            while time.monotonic() < deadline:
                if all(app.runs.get(bot, r.run_id).status.finished for r in runs):
                    break
                time.sleep(0.05)
            assert [app.runs.get(bot, r.run_id).status for r in runs] == [
                RunStatus.COMPLETED
            ] * RUNS
            assert all(app.runs.state(bot, r.run_id)["n"] == 5 for r in runs)
        values = scrape(port)
        assert values[("tether_runs", frozenset({("status", "completed")}))] == RUNS
        claims = {
            dict(labels)["worker"]: value
            for (name, labels), value in values.items()
            if name == "tether_worker_claims_total"
        }
        assert set(claims) == {"w/1", "w/2", "w/3"}
        assert sum(claims.values()) == RUNS
    finally:
        worker.send_signal(signal.SIGTERM)
        _, stderr = worker.communicate(timeout=60)
    assert worker.returncode == 0, stderr
    assert f"executed {RUNS} claims" in " ".join(stderr.split())
