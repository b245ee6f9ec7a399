"""The LangGraph approval example, run as a user would: killed mid-run, resumed in a new
process, its approval decided with the ``tether`` CLI, finished in a third process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.support import TestDatabase

ROOT = Path(__file__).resolve().parents[2]
THREAD = "claim-9"


def environment(db: TestDatabase, log: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TETHER_URL": db.url,
        "TETHER_EMBEDDER": "none",
        "LANGGRAPH_EXAMPLE_LOG": str(log),
        "LANGGRAPH_EXAMPLE_STEP_SECONDS": "0.4",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }


def example(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "examples.langgraph_approval", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def tether(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lines(log: Path) -> list[tuple[int, str]]:
    if not log.exists():
        return []
    return [
        (int(pid), text)
        for pid, _, text in (line.partition(" ") for line in log.read_text().splitlines())
    ]


def test_the_example_survives_a_kill_and_takes_its_approval_from_tether(
    backend: TestDatabase, tmp_path: Path
) -> None:
    log = tmp_path / "nodes.log"
    env = environment(backend, log)
    example(env, "setup")

    first = subprocess.Popen(
        [sys.executable, "-m", "examples.langgraph_approval", "run", THREAD],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while not any(text == "gathered invoice" for _, text in lines(log)):
        assert first.poll() is None, "the first process ended before it could be killed"
        assert time.monotonic() < deadline, "the first process did not get going"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    before_kill = [text for pid, text in lines(log) if pid == first.pid]
    assert "gathered photos" in before_kill and "paid 120" not in before_kill

    waiting = example(env, "run", THREAD)
    assert waiting.startswith("waiting for approval ")
    approval_id = waiting.split()[3].rstrip(":")
    resumed = [text for pid, text in lines(log) if pid != first.pid]
    assert resumed[0].startswith("continued before ")
    gathered = Counter(text for _, text in lines(log) if text.startswith("gathered "))
    assert set(gathered) == {
        "gathered photos",
        "gathered invoice",
        "gathered delivery_record",
        "gathered customer_history",
    }
    assert gathered["gathered photos"] == 1  # done before the kill: not done again
    assert sum(gathered.values()) <= 5  # at most the step in flight ran twice

    asked_itself = tether(env, "approvals", "approve", approval_id, "--tenant", "acme")
    assert asked_itself.returncode != 0  # no --as: nobody decides
    own = tether(
        env, "approvals", "approve", approval_id, "--tenant", "acme", "--as", "refund-agent"
    )
    assert own.returncode != 0, "the agent that asked may not approve its own request"
    decided = tether(env, "approvals", "approve", approval_id, "--tenant", "acme", "--as", "boss")
    assert decided.returncode == 0, decided.stderr

    finished = example(env, "run", THREAD)
    assert finished.strip() == "completed: refund approved by boss; paid 120 EUR"
    assert [text for _, text in lines(log)].count("paid 120") == 1
    assert example(env, "run", THREAD) == finished  # nothing left to do, nothing done twice

    listed = tether(env, "runs", "ls", "--tenant", "acme", "--as", "boss", "--json")
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)
    assert (run["workflow"], run["status"]) == ("langgraph", "completed")
