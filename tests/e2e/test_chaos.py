"""Chaos: four real workers under production faults; nothing lost, nothing applied twice.

On a private PostgreSQL cluster the test restarts the server again and again
(``pg_ctl restart -m fast`` and ``-m immediate``) while SIGKILLing random workers (a
supervisor starts a replacement at once). On SQLite it holds the write lock past the
workers' busy timeout, makes every write of the workers fail as on a full disk, and makes
the file read-only, with kills too. The workload is :mod:`tests.e2e.chaos_workflow`:
keyed effects, two kinds in three not retry-safe, counted by a service in this process.
An operator answers the runs that wait for a person the way a careful one would: it
looks the key up in the service, and retries only a call that is not applied and not in
flight in a live process.

The test prints its figures and requires: 0 lost runs, 0 non-retry-safe effects applied
twice, 0 calls begun after their result was recorded, 0 effects applied and never
recorded once every run finished, 0 runs left claimed two lease lengths after the last
fault, and 0 worker exits besides the SIGKILLs. ``TETHER_CHAOS_SEED`` replays a seed.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.chaos_support import (
    EffectService,
    PrivateCluster,
    Workers,
    hold_sqlite_lock,
    limit_file_size,
    set_read_only,
)
from tether import Tether
from tether.errors import StorageUnavailable
from tether.principals import Principal, Role
from tether.runs import RunStatus
from tether.runs.models import InterruptReason, JournalKind, JournalStatus

LEASE_S = 1.0
WORKERS = 4
FAULT_S = 1.0
"""How long a lock is held, the disk stays full or the file read-only."""
BUSY_TIMEOUT_MS = 200
EFFECT_S = 0.05
"""How long each effect's call takes (between its begin and its apply)."""


@dataclass
class Operator:
    """The test's view of the database, and the person who answers reviews."""

    app: Tether
    principal: Principal
    service: EffectService
    reviews: int = 0

    def answer_reviews(self) -> None:
        try:
            waits = self.app.runs.waits(self.principal)
            for wait in waits:
                if wait.reason is not InterruptReason.HUMAN_REVIEW:
                    continue
                key = wait.request.get("idempotency_key")
                if key is None:
                    answer: Any = "the database is back"
                elif key in self.service.results:
                    answer = {"result": self.service.results[key]}
                elif self.service.in_flight(key):
                    continue  # a live process may still apply it: ask again later
                else:
                    answer = {"retry": True}
                self.app.runs.answer(self.principal, wait.wait_id, answer)
                self.reviews += 1
        except StorageUnavailable:
            return

    def read(self, fn: Callable[[], Any]) -> Any:
        """A read that waits out the last fault (dead pooled connections, a busy file)."""
        for _ in range(50):
            try:
                return fn()
            except StorageUnavailable:
                time.sleep(0.1)
        return fn()

    def runs(self) -> list[Any]:
        return self.read(lambda: self.app.runs.all(self.principal, limit=10_000))

    def stale_claims(self) -> int:
        """Runs claimed by a lease that has run out and that nobody took over."""
        now = self.app.clock.now()
        return sum(
            1
            for run in self.runs()
            if run.status is RunStatus.RUNNING
            and run.lease_expires_at is not None
            and run.lease_expires_at < now
        )


def sleep_while_answering(operator: Operator, workers: Workers, seconds: float) -> None:
    """Let the chaos run for ``seconds`` (the schedule, not a wait for a result)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        workers.check()
        operator.answer_reviews()
        time.sleep(0.05)


def campaign(
    url: str,
    tmp_path: Path,
    label: str,
    faults: dict[str, Callable[[Workers], None]],
    *,
    rounds: int,
    runs: int,
    extra_env: dict[str, str] | None = None,
) -> None:
    """``runs`` runs at the start and as many again spread over the rounds, so every
    fault lands on work under way."""
    from tests.e2e.chaos_workflow import Progress, chaos

    seed = int(os.environ.get("TETHER_CHAOS_SEED", str(random.SystemRandom().randrange(1 << 30))))
    print(f"\nchaos ({label}): seed {seed}; TETHER_CHAOS_SEED={seed} replays it")
    rng = random.Random(seed)
    service = EffectService()
    service_url = service.start()
    app, _ = Tether.migrate(url=url)
    env = {"CHAOS_EFFECT_S": str(EFFECT_S), **(extra_env or {})}
    workers = Workers(url, service_url, tmp_path, LEASE_S, env)
    try:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.tenants.grant(alice, "agent", [Role.AGENT.value])
        app.tenants.grant(alice, "olivia", [Role.OPERATOR.value])
        agent = app.tenants.principal("acme", "agent")
        operator = Operator(app, app.tenants.principal("acme", "olivia"), service)
        run_ids = {app.runs.start(agent, chaos, Progress()).run_id for _ in range(runs)}
        for _ in range(WORKERS):
            workers.start()

        injected: list[str] = []
        kinds: list[str] = []
        for round_number in range(rounds):
            sleep_while_answering(operator, workers, rng.uniform(0.2, 1.0))
            # New work right before the fault, so the fault lands on nodes under way.
            for _ in range(runs * (round_number + 1) // rounds - runs * round_number // rounds):
                run_ids.add(operator.read(lambda: app.runs.start(agent, chaos, Progress()).run_id))
            sleep_while_answering(operator, workers, 0.1)
            if (round_number == 0 or rng.random() < 0.6) and workers.live:
                workers.kill(rng.choice(sorted(workers.live)))
                workers.start()
            if not kinds:  # every kind of fault once per cycle, in a random order
                kinds = rng.sample(sorted(faults), len(faults))
            name = kinds.pop()
            faults[name](workers)
            injected.append(name)
        last_fault = time.monotonic()
        sleep_while_answering(operator, workers, 2 * LEASE_S - (time.monotonic() - last_fault))
        left_claimed = operator.stale_claims()

        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if all(run.status is RunStatus.COMPLETED for run in operator.runs()):
                break
            sleep_while_answering(operator, workers, 0.2)
        workers.stop_all()

        figures = tally(operator, service, run_ids)
        figures["runs left claimed two leases after the last fault"] = left_claimed
        figures["worker exits besides the SIGKILLs"] = len(workers.exited)
        logs = [workers.log_tail(owner, 10**7) for owner in all_owners(workers)]
        faulted = sum(log.count("storage_unavailable") for log in logs)
        in_node = sum(log.count("handing the run back") for log in logs)
        print(
            f"faults {len(injected)} ({', '.join(f'{n} {injected.count(n)}' for n in faults)}), "
            f"SIGKILLs {len(workers.killed)}, workers started {workers.started}, "
            f"runs {len(run_ids)}, runs stopped by a fault inside a node {in_node}, "
            f"effect calls begun {len(service.begun)}, applied "
            f"{len(service.applied)} for {len(service.results)} keys, reviews answered "
            f"{operator.reviews}, worker log lines on storage faults {faulted}"
        )
        for name, value in figures.items():
            print(f"  {name}: {value}")
        assert not workers.exited, [(o, c, workers.log_tail(o)) for o, c in workers.exited]
        assert all(value == 0 for value in figures.values()), figures
        assert workers.killed and faulted and in_node, "the faults did not reach the work"
    finally:
        workers.stop_all()
        app.close()
        service.stop()


def all_owners(workers: Workers) -> list[str]:
    return [f"worker-{n}" for n in range(workers.started)]


def tally(operator: Operator, service: EffectService, run_ids: set[str]) -> dict[str, int]:
    runs = {run.run_id: run for run in operator.runs()}
    done_at: dict[str, float] = {}
    for run_id in run_ids:
        journal = operator.read(lambda r=run_id: operator.app.runs.journal(operator.principal, r))
        for entry in journal:
            if entry.kind is JournalKind.EFFECT and entry.status is JournalStatus.DONE:
                assert entry.finished_at is not None
                done_at[entry.idempotency_key] = entry.finished_at.timestamp()
    retry_safe = {call.key for call in service.begun if call.retry_safe}
    return {
        "lost runs": sum(
            1
            for run_id in run_ids
            if run_id not in runs or runs[run_id].status is not RunStatus.COMPLETED
        ),
        "non-retry-safe effects applied twice": sum(
            1 for key, n in service.applications.items() if n > 1 and key not in retry_safe
        ),
        "calls begun after their result was recorded": sum(
            1 for call in service.begun if call.key in done_at and call.at > done_at[call.key]
        ),
        "effects applied and never recorded": sum(
            1 for key in service.results if key not in done_at
        ),
    }


# -- PostgreSQL ------------------------------------------------------------------------


def postgres_faults(cluster: PrivateCluster) -> dict[str, Callable[[Workers], None]]:
    return {
        "restart -m fast": lambda workers: cluster.restart("fast"),
        "restart -m immediate": lambda workers: cluster.restart("immediate"),
    }


def postgres_campaign(tmp_path: Path, *, rounds: int, runs: int) -> None:
    pytest.importorskip("psycopg")
    cluster = PrivateCluster()
    try:
        url = cluster.create_database("chaos")
        campaign(url, tmp_path, "PostgreSQL", postgres_faults(cluster), rounds=rounds, runs=runs)
    finally:
        cluster.close()


def test_chaos_postgres(tmp_path: Path) -> None:
    postgres_campaign(tmp_path, rounds=6, runs=16)


@pytest.mark.slow
def test_chaos_postgres_long(tmp_path: Path) -> None:
    postgres_campaign(tmp_path, rounds=40, runs=80)


# -- SQLite ----------------------------------------------------------------------------


def sqlite_faults(path: Path) -> dict[str, Callable[[Workers], None]]:
    def lock(workers: Workers) -> None:
        hold_sqlite_lock(path, FAULT_S)

    def disk_full(workers: Workers) -> None:
        pids = [process.pid for process in workers.live.values()]
        limit_file_size(pids, 1)
        try:
            time.sleep(FAULT_S)  # the fault's duration
        finally:
            limit_file_size(pids, None)

    def read_only(workers: Workers) -> None:
        set_read_only(path, True)
        try:
            # a supervisor restarts a worker meanwhile: it opens the file read-only
            if workers.live:
                workers.kill(sorted(workers.live)[0])
                workers.start()
            time.sleep(FAULT_S)  # the fault's duration
        finally:
            set_read_only(path, False)

    return {"lock held": lock, "disk full": disk_full, "read-only file": read_only}


def sqlite_campaign(tmp_path: Path, *, rounds: int, runs: int) -> None:
    path = tmp_path / "chaos.db"
    campaign(
        f"sqlite:///{path}",
        tmp_path,
        "SQLite",
        sqlite_faults(path),
        rounds=rounds,
        runs=runs,
        extra_env={"TETHER_SQLITE_BUSY_TIMEOUT_MS": str(BUSY_TIMEOUT_MS)},
    )


def test_chaos_sqlite(tmp_path: Path) -> None:
    sqlite_campaign(tmp_path, rounds=6, runs=16)


@pytest.mark.slow
def test_chaos_sqlite_long(tmp_path: Path) -> None:
    sqlite_campaign(tmp_path, rounds=40, runs=80)
