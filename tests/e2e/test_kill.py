"""Real kills: SIGKILL worker processes at random moments; nothing is lost or repeated.

Each round starts a ``tether worker`` process, waits until it is doing work, sleeps a
random moment and SIGKILLs it. After the kills a last worker finishes whatever is left.
Then every run must be completed, every effect key applied exactly once, and no call may
have reached the service after that key's result was recorded. The seed is printed;
``TETHER_KILL_SEED`` replays a failure.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import TestDatabase
from tether.principals import Role
from tether.runs import RunStatus
from tether.runs.models import JournalKind, JournalStatus

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 0.5
RUNS = 3


def start_worker(
    db: TestDatabase, service_db: Path, owner: str, concurrency: int = 1
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "TETHER_URL": db.url,
        "KILL_SERVICE_DB": str(service_db),
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    command = [
        sys.executable,
        "-m",
        "tether",
        "worker",
        "--workflows",
        "tests.e2e.kill_workflow:registry",
        "--until-idle",
        "--lease",
        str(LEASE_S),
        "--poll",
        "0.02",
        "--owner",
        owner,
        "--concurrency",
        str(concurrency),
    ]
    return subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def service_calls(service_db: Path) -> int:
    if not service_db.exists():
        return 0
    with sqlite3.connect(service_db) as conn:
        try:
            return int(conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def open_intents(db: TestDatabase, since: float) -> int:
    """Effect intents without a result that were written at or after ``since``."""
    with db.open() as app:
        operator = app.tenants.principal("acme", "olivia")
        count = 0
        for run in app.runs.all(operator, limit=1000):
            count += sum(
                1
                for entry in app.runs.journal(operator, run.run_id)
                if entry.kind is JournalKind.EFFECT
                and entry.status is JournalStatus.INTENT
                and entry.started_at.timestamp() >= since
            )
        return count


def wait_until(predicate, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def kill_campaign(
    db: TestDatabase, tmp_path: Path, kills: int, runs: int = RUNS, concurrency: int = 1
) -> None:
    from tests.e2e.kill_workflow import Counter, kill_test

    seed = int(os.environ.get("TETHER_KILL_SEED", str(random.SystemRandom().randrange(1 << 30))))
    print(
        f"\nreal-kill test: seed {seed} ({db.backend}, {kills} kills); "
        f"TETHER_KILL_SEED={seed} replays it"
    )
    rng = random.Random(seed)
    service_db = tmp_path / "kill-service.db"

    with db.open() as app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.tenants.grant(alice, "agent", [Role.AGENT.value])
        app.tenants.grant(alice, "olivia", [Role.OPERATOR.value])
        agent = app.tenants.principal("acme", "agent")
        run_ids = [app.runs.start(agent, kill_test, Counter()).run_id for _ in range(runs)]

    between = made = 0
    for round_number in range(kills):
        before = service_calls(service_db)
        spawned = time.time()
        worker = start_worker(db, service_db, f"victim-{round_number}", concurrency)
        started = wait_until(
            lambda before=before, worker=worker: (
                service_calls(service_db) > before or worker.poll() is not None
            ),
            30,
        )
        assert started, "worker did no work within 30 s"
        if worker.poll() is not None:
            break  # everything finished before we could kill it
        time.sleep(rng.uniform(0.0, 0.25))
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        made += 1
        if open_intents(db, spawned):
            between += 1
        time.sleep(LEASE_S)  # let the dead worker's lease run out

    finisher = start_worker(db, service_db, "finisher", concurrency)
    _, stderr = finisher.communicate(timeout=300)
    assert finisher.returncode == 0, stderr.decode()

    with db.open() as app:
        operator = app.tenants.principal("acme", "olivia")
        runs = {run.run_id: run for run in app.runs.all(operator, limit=1000)}
        assert set(runs) == set(run_ids), "a run was lost"
        assert all(run.status is RunStatus.COMPLETED for run in runs.values()), [
            (run.run_id, run.status, run.error) for run in runs.values()
        ]
        done_at = {}
        for run_id in run_ids:
            for entry in app.runs.journal(operator, run_id):
                if entry.kind is JournalKind.EFFECT:
                    assert entry.status is JournalStatus.DONE
                    assert entry.finished_at is not None
                    done_at[entry.idempotency_key] = entry.finished_at.timestamp()
            assert app.runs.state(operator, run_id)["done"] == list(range(20))

    with sqlite3.connect(service_db) as conn:
        calls = conn.execute("SELECT key, started FROM calls").fetchall()
        applied = {row[0] for row in conn.execute("SELECT key FROM applied")}
    assert applied == set(done_at), "an effect was applied without being recorded, or not at all"
    late = [(key, started) for key, started in calls if started > done_at[key] + 0.001]
    assert not late, f"calls after their result was recorded: {late[:5]}"
    repeated = len(calls) - len(applied)
    print(
        f"kills {made} (of {kills} planned: the runs may finish first), between intent and "
        f"result {between}, calls {len(calls)} for "
        f"{len(applied)} keys (repeats after a crash before the result: {repeated}), "
        "repeats after a recorded result: 0, lost runs: 0"
    )
    assert made and between * 3 >= made, (
        f"only {between} of {made} kills landed between intent and result"
    )


def test_real_kills(backend: TestDatabase, tmp_path: Path) -> None:
    kill_campaign(backend, tmp_path, kills=30)


def test_real_kills_of_a_worker_committing_steps_in_groups(
    backend: TestDatabase, tmp_path: Path
) -> None:
    """Four executors in each victim: their steps and effect intents share commits, so
    the kills land inside batches as well."""
    kill_campaign(backend, tmp_path, kills=15, runs=8, concurrency=4)


@pytest.mark.slow
def test_real_kills_long(backend: TestDatabase, tmp_path: Path) -> None:
    kill_campaign(backend, tmp_path, kills=300, runs=50)  # work enough for the 300 kills
