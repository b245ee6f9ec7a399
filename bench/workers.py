"""Many workers: durable steps per second with 1, 2 and 4 worker processes, and the time
from an approval decision to the run resuming, on SQLite and PostgreSQL.

A durable step is a node boundary with its checkpoint and no effect: the workload is
``--runs`` runs of a ``--steps``-step chain (each node adds one to a counter), all queued
before the workers start. Each worker is a process of its own (``Worker.run`` until no run
is runnable); steps per second = steps of every run / (the last worker's end - the start
signal). Then the same with workers of ``--threads`` executors each (as ``tether worker
--concurrency``), whose steps share commits (group commit): the bench reports the mean
steps per commit and the workers' own CPU time per step.

Decision to resume: one idle worker process (woken by LISTEN/NOTIFY on PostgreSQL, by
``PRAGMA data_version`` on SQLite; its poll fallback is 2 s, as ``tether worker``'s); the
bench starts a run that asks for an approval, waits until it waits, approves it, and the
node records the wall-clock time at which it resumed. ``--decisions`` samples.

    python -m bench.workers                  # both backends, 1/2/4 workers
    python -m bench.workers --no-postgres --runs 100
    python -m bench.workers --profile postgres   # where a worker's time goes
"""

from __future__ import annotations

import argparse
import cProfile
import json
import multiprocessing
import os
import pstats
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, closing
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench._harness import BENCH_KEY, bench_settings, machine
from bench._tether import make_workflow, postgres_settings, scratch_postgres
from tether import Tether
from tether.principals import Principal
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.worker import Worker, run_workers

RESULTS = Path(__file__).parent / "results" / "workers-latest.json"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
TENANT = "bench"
WORKER_COUNTS = (1, 2, 4)
STEPS = 20
CHAIN = make_workflow(STEPS)


class Decision(BaseModel):
    resumed_at: float = 0.0


approval_flow: Workflow[Decision] = Workflow("bench_approval", state=Decision)


@approval_flow.node(start=True)
def ask(ctx: RunContext, state: Decision) -> str:
    ctx.approval({"ship": 1}, rationale="bench", expires_in=timedelta(hours=1))
    state.resumed_at = time.time()
    return END


REGISTRY = WorkflowRegistry(CHAIN, approval_flow)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.workers", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=200, help="runs per measurement")
    parser.add_argument("--decisions", type=int, default=100, help="decision-to-resume samples")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("TETHER_BENCH_POSTGRES_URL", DEFAULT_PG),
        help="server to make a scratch database on (env TETHER_BENCH_POSTGRES_URL)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=8,
        help="also measure workers of this many threads each (--concurrency); 1: skip",
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument("--no-sqlite", action="store_true", help="skip SQLite")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write results")
    parser.add_argument(
        "--profile",
        choices=("sqlite", "postgres"),
        help="instead of the benchmark, profile one worker over --runs runs and print the top",
    )
    return parser.parse_args(argv)


def prepare(url: str) -> None:
    """Migrate a scratch database and make the tenant."""
    app, _ = Tether.migrate(bench_settings(url))
    with app:
        app.tenants.create(TENANT, admin="admin")
        admin = app.tenants.principal(TENANT, "admin")
        app.tenants.grant(admin, "agent", ["agent"])
        app.tenants.grant(admin, "approver", ["approver"])


def enqueue(url: str, runs: int) -> None:
    with Tether.open(bench_settings(url)) as app:
        agent = app.tenants.principal(TENANT, "agent")
        for _ in range(runs):
            app.runs.start(agent, CHAIN, CHAIN.state())


def worker_process(url: str, threads: int, ready: Any, start: Any, results: Any) -> None:
    """One worker process (``threads`` executors, as ``tether worker --concurrency``):
    open, say ready, wait for the start, run until idle."""
    os.environ["TETHER_SECRET_KEY"] = BENCH_KEY
    with Tether.open(bench_settings(url, pg_pool_max_size=max(4, threads + 2))) as app:
        workers = [Worker(app.executor(REGISTRY), app.runs) for _ in range(threads)]
        ready.release()
        start.wait()
        began = time.process_time()
        claims = run_workers(workers, until_idle=True)
        commits = app.storage.step_commits  # type: ignore[attr-defined]
        cpu = time.process_time() - began
        results.put((time.time(), claims, commits.batches, commits.steps, cpu))


def throughput(url: str, workers: int, runs: int, threads: int = 1) -> dict[str, Any]:
    """Steps per second of ``workers`` processes over ``runs`` queued runs."""
    enqueue(url, runs)
    context = multiprocessing.get_context("spawn")
    ready, start, results = context.Semaphore(0), context.Event(), context.Queue()
    processes = [
        context.Process(target=worker_process, args=(url, threads, ready, start, results))
        for _ in range(workers)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        if not ready.acquire(timeout=120):
            raise RuntimeError("a worker process did not start")
    began = time.time()
    start.set()
    ends = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    elapsed = max(end[0] for end in ends) - began
    with Tether.open(bench_settings(url)) as app:
        agent = app.tenants.principal(TENANT, "agent")
        unfinished = [
            r for r in app.runs.all(agent, limit=runs * 10) if r.status is not RunStatus.COMPLETED
        ]
    if unfinished:
        raise RuntimeError(f"{len(unfinished)} runs did not complete")
    steps = runs * STEPS
    return {
        "workers": workers,
        "threads_per_worker": threads,
        "runs": runs,
        "steps": steps,
        "seconds": round(elapsed, 3),
        "steps_per_s": round(steps / elapsed, 1),
        "claims": sorted(end[1] for end in ends),
        "steps_per_commit": round(
            sum(end[3] for end in ends) / max(1, sum(end[2] for end in ends)), 2
        ),
        "worker_cpu_ms_per_step": round(sum(end[4] for end in ends) / steps * 1000, 3),
    }


def idle_worker_process(url: str, ready: Any, stop: Any) -> None:
    os.environ["TETHER_SECRET_KEY"] = BENCH_KEY
    with Tether.open(bench_settings(url)) as app:
        wakeups = app.storage.wakeups()
        worker = Worker(app.executor(REGISTRY), app.runs, poll_s=2.0, wakeups=wakeups)
        worker.stop = stop
        ready.release()
        worker.run()
        wakeups.close()


def decision_latency(url: str, samples: int) -> dict[str, Any]:
    """Milliseconds from an approval's commit to its node resuming, with an idle worker."""
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Semaphore(0), context.Event()
    process = context.Process(target=idle_worker_process, args=(url, ready, stop))
    process.start()
    if not ready.acquire(timeout=120):
        raise RuntimeError("the worker process did not start")
    latencies: list[float] = []
    try:
        with Tether.open(bench_settings(url)) as app:
            agent = app.tenants.principal(TENANT, "agent")
            approver = app.tenants.principal(TENANT, "approver")
            for _ in range(samples):
                run_id = app.runs.start(agent, approval_flow, Decision()).run_id
                waits = _poll(partial(app.runs.waits, agent, run_id=run_id))
                time.sleep(0.05)  # let the worker go idle again
                app.runs.decide(approver, waits[0].wait_id, approve=True)
                decided = time.time()
                _poll(partial(_finished, app, agent, run_id))
                resumed = app.runs.state(agent, run_id)["resumed_at"]
                latencies.append((resumed - decided) * 1000)
    finally:
        stop.set()
        process.join(timeout=60)
    latencies.sort()
    return {
        "samples": samples,
        "median_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2),
    }


def _finished(app: Tether, agent: Principal, run_id: str) -> bool:
    return app.runs.get(agent, run_id).status.finished


def _poll(check: Any, within_s: float = 30.0) -> Any:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.002)
    raise RuntimeError("timed out waiting for the worker")


def profile(args: argparse.Namespace, name: str, url: str) -> int:
    """Where a worker's time goes: one worker process's ``--threads`` executors (sharing
    commits) over ``--runs`` runs, unprofiled then profiled. Prints wall and CPU time per
    step (the worker's own; on PostgreSQL also the server processes serving it, read from
    /proc when the server runs on this machine), steps per commit, a bare commit's rate on
    the same database from 1 to 8 connections at once, then the profile of every executor
    thread by its own CPU time (``time.thread_time``)."""
    steps = args.runs * STEPS
    threads = max(1, args.threads)
    profilers: list[cProfile.Profile] = []
    with Tether.open(bench_settings(url, pg_pool_max_size=threads + 2)) as app:
        for run_profiler in (False, True):
            enqueue(url, args.runs)
            workers = [Worker(app.executor(REGISTRY), app.runs) for _ in range(threads)]
            if run_profiler:
                workers = [_Profiled(worker, profilers) for worker in workers]
            commits = app.storage.step_commits  # type: ignore[attr-defined]
            batches, grouped = commits.batches, commits.steps
            server = _server_cpu(app) if name == "postgres" else None
            began, cpu = time.perf_counter(), time.process_time()
            run_workers(workers, until_idle=True)
            elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
            if run_profiler:
                continue
            per_commit = (commits.steps - grouped) / max(1, commits.batches - batches)
            line = (
                f"{threads} executor(s), {steps} steps in {elapsed:.2f}s: {steps / elapsed:.0f} "
                f"steps/s, {per_commit:.2f} steps per commit; per step {elapsed / steps * 1000:.2f}"
                f" ms wall, {cpu / steps * 1000:.3f} ms CPU in the worker"
            )
            if server is not None:
                used = _server_cpu(app) - server
                line += f", {used / steps * 1000:.3f} ms CPU in the server's processes"
            log(line)
    for connections in (1, 2, 4, 8):
        rate = commit_rate(name, url, connections)
        log(f"bare commits, {connections} connection(s) at once: {rate:.0f}/s")
    stats = pstats.Stats(*profilers, stream=sys.stderr)  # type: ignore[arg-type]
    stats.sort_stats("cumulative").print_stats(40)
    return 0


class _Profiled(Worker):
    """A worker whose loop runs under a profiler of its own thread's CPU time."""

    def __init__(self, worker: Worker, profilers: list[cProfile.Profile]) -> None:
        self.__dict__.update(worker.__dict__)
        self._profilers = profilers

    def run(self, *, until_idle: bool = False, max_runs: int | None = None) -> int:
        profiler = cProfile.Profile(time.thread_time)
        self._profilers.append(profiler)
        profiler.enable()
        try:
            return super().run(until_idle=until_idle, max_runs=max_runs)
        finally:
            profiler.disable()


def _server_cpu(app: Tether) -> float:
    """CPU seconds used so far by the server processes of this database (PostgreSQL on this
    machine; 0 if /proc does not show them)."""
    with app.storage.system_transaction(write=False) as txn:
        rows = txn.connection.execute(  # type: ignore[attr-defined]
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        ).fetchall()
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for row in rows:
        try:
            fields = Path(f"/proc/{row['pid']}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def commit_rate(name: str, url: str, connections: int, seconds: float = 3.0) -> float:
    """Commits per second of a one-row INSERT from ``connections`` threads at once, each
    on its own connection, in a scratch table: what the database's commit (its fsync, its
    group commit) allows with no engine at all. SQLite at synchronous=FULL, Tether's
    default; PostgreSQL at the server's settings."""
    counts: list[int] = []
    if name == "postgres":
        import psycopg

        def connect() -> Any:
            return psycopg.connect(url, autocommit=True)
    else:
        path = url.removeprefix("sqlite:///")

        def connect() -> Any:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30)
            conn.execute("PRAGMA synchronous = FULL")
            return conn

    with closing(connect()) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commit_probe (n integer)")

    def insert_loop() -> None:
        done, deadline = 0, time.monotonic() + seconds
        with closing(connect()) as conn:
            while time.monotonic() < deadline:
                conn.execute("INSERT INTO bench_commit_probe (n) VALUES (1)")
                done += 1
        counts.append(done)

    threads = [threading.Thread(target=insert_loop) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds


def backend_figures(url: str, args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"throughput": []}
    for workers in WORKER_COUNTS:
        result = throughput(url, workers, args.runs)
        log(
            f"  {workers} worker(s): {result['steps_per_s']:.0f} steps/s "
            f"({result['steps']} steps in {result['seconds']:.2f}s, "
            f"{result['steps_per_commit']} steps per commit)"
        )
        figures["throughput"].append(result)
    if args.threads > 1:
        figures["threaded"] = []
        for workers in WORKER_COUNTS:
            result = throughput(url, workers, args.runs, args.threads)
            log(
                f"  {workers} worker(s) x {args.threads} threads: "
                f"{result['steps_per_s']:.0f} steps/s ({result['steps_per_commit']} steps per "
                f"commit, worker CPU {result['worker_cpu_ms_per_step']} ms per step)"
            )
            figures["threaded"].append(result)
    base = figures["throughput"][0]["steps_per_s"]
    figures["speedup"] = {
        str(r["workers"]): round(r["steps_per_s"] / base, 2) for r in figures["throughput"]
    }
    figures["decision_to_resume"] = decision_latency(url, args.decisions)
    log(
        f"  decision to resume: median {figures['decision_to_resume']['median_ms']} ms, "
        f"p99 {figures['decision_to_resume']['p99_ms']} ms"
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ["TETHER_SECRET_KEY"] = BENCH_KEY
    report: dict[str, Any] = {"steps_per_run": STEPS, "runs": args.runs}
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp, ExitStack() as stack:
        targets: list[tuple[str, str]] = []
        if not args.no_sqlite and args.profile in (None, "sqlite"):
            targets.append(("sqlite", f"sqlite:///{Path(tmp) / 'workers.db'}"))
        if not args.no_postgres and args.profile in (None, "postgres"):
            try:
                url, _version = stack.enter_context(scratch_postgres(args.postgres_url))
                targets.append(("postgres", url))
                report["postgres_settings"] = postgres_settings(url)
            except Exception as exc:
                log(f"PostgreSQL unavailable: {type(exc).__name__}: {exc}")
                report["postgres_error"] = str(exc)
        for name, url in targets:
            prepare(url)
            if args.profile:
                return profile(args, name, url)
            log(f"{name}:")
            report[name] = backend_figures(url, args)
    report["machine"] = machine(report.get("postgres_settings"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, default=str))
    log(f"results in {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
