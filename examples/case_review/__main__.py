"""``python -m examples.case_review``: the case review, end to end, in real processes.

1. migrate a fresh database, create the tenant and its principals, seed the case service;
2. start a run of ``case_review`` for case C-1001;
3. worker process 1 runs until the run asks for the missing evidence;
4. the clarification is answered with the CLI;
5. worker process 2 drafts the recommendation and creates the case note; the case service
   applies the note and this script SIGKILLs the worker before the result is recorded;
6. worker process 3 resumes the run: the note is reconciled by its key, not created again;
   the run asks a supervisor for approval; ``tether runs handoff`` prints the handoff
   document at that wait;
7. the supervisor approves with the CLI; worker process 4 revalidates and finalises;
8. the report: timeline, checkpoints, each effect with its key and how many calls the case
   service received for it, and the audit trail verified.

Exits non-zero if any side effect was applied more than once or the run did not complete.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from examples.case_review.service import CaseService
from examples.case_review.workflow import CaseReview, case_review
from tether import Tether, load_settings
from tether.runs import RunStatus

console = Console(width=150)
ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = "examples.case_review.workflow:registry"
LEASE_S = 2.0


def tether_cli(*args: str, env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "tether", *args]
    console.print(f"[dim]$ tether {' '.join(args)}[/dim]", highlight=False)
    subprocess.run(command, env=env, cwd=ROOT, check=True)


def start_worker(env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "tether",
        "worker",
        "--workflows",
        WORKFLOWS,
        "--until-idle",
        "--lease",
        str(LEASE_S),
        "--poll",
        "0.05",
        "--owner",
        name,
    ]
    console.print(
        f"[dim]$ tether worker --workflows {WORKFLOWS} --until-idle --owner {name}[/dim]",
        highlight=False,
    )
    return subprocess.Popen(command, env=env, cwd=ROOT)


def wait_for(predicate, what: str, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dir", type=Path, default=Path("demo-output"), help="where the databases go"
    )
    args = parser.parse_args()
    directory: Path = args.dir.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    for old in [
        *directory.glob("case-review.db*"),
        *directory.glob("case-service.db*"),
        directory / "killed.marker",
    ]:
        old.unlink(missing_ok=True)
    url = f"sqlite:///{directory / 'case-review.db'}"
    service_db = directory / "case-service.db"
    marker = directory / "killed.marker"
    env = {
        **os.environ,
        "TETHER_URL": url,
        "CASE_SERVICE_DB": str(service_db),
        "TETHER_TENANT": "acme",
    }

    console.rule("1. a fresh database, a tenant, its principals, the case service")
    tether_cli("migrate", env=env)
    tether_cli("tenants", "create", "acme", "--name", "Acme Insurance", "--admin", "alice", env=env)
    for principal, role in (("case-agent", "agent"), ("olivia", "operator"), ("sam", "approver")):
        tether_cli("principals", "add", principal, "--role", role, "--as", "alice", env=env)
    service = CaseService(service_db)
    service.seed()

    console.rule("2. start the run")
    settings = load_settings(url=url)
    with Tether.open(settings) as app:
        agent = app.tenants.principal("acme", "case-agent")
        operator = app.tenants.principal("acme", "olivia")
        run = app.runs.start(agent, case_review, CaseReview(case_id="C-1001"))
    run_id = run.run_id
    console.print(f"run {run_id} queued")

    def current() -> object:
        with Tether.open(settings) as app:
            return app.runs.get(operator, run_id)

    console.rule("3. worker 1 runs until the run needs the missing evidence")
    start_worker(env, "worker-1").wait()
    with Tether.open(settings) as app:
        state = app.runs.get(operator, run_id)
        wait_id = state.wait_id
    console.print(f"run is {state.status.value}; question {wait_id}")

    console.rule("4. answer the clarification")
    tether_cli(
        "runs",
        "answer",
        str(wait_id),
        "--as",
        "olivia",
        "--answer",
        '"Loss adjuster report LA-5521, uploaded 2026-11-20"',
        env=env,
    )

    console.rule("5. worker 2 creates the case note and is killed before recording it")
    crash_env = {**env, "CASE_SERVICE_PAUSE_AFTER": "add_note", "CASE_SERVICE_MARKER": str(marker)}
    victim = start_worker(crash_env, "worker-2")
    wait_for(marker.exists, "the case service to apply the note")
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    with Tether.open(settings) as app:
        entries = app.runs.journal(operator, run_id)
        run_now = app.runs.get(operator, run_id)
    pending = [e for e in entries if e.kind.value == "effect" and e.status.value == "intent"]
    console.print(
        f"SIGKILLed worker-2 (exit {victim.returncode}); run is {run_now.status.value} with "
        f"{len(pending)} effect intent(s) and no result: "
        f"{', '.join(e.idempotency_key for e in pending)}"
    )

    console.rule("6. worker 3 resumes the run in a new process once the lease has expired")
    with Tether.open(settings) as app:
        wait_for(
            lambda: (
                (app.runs.get(operator, run_id).lease_expires_at or app.clock.now())
                <= app.clock.now()
            ),
            "the dead worker's lease to expire",
        )
    start_worker(env, "worker-3").wait()
    with Tether.open(settings) as app:
        state = app.runs.get(operator, run_id)
    console.print(f"run is {state.status.value}; approval {state.wait_id}")
    tether_cli("approvals", "ls", "--as", "sam", env=env)
    console.print("the handoff for whoever picks the case up, from the run's durable state:")
    tether_cli("runs", "handoff", run_id, "--as", "olivia", env=env)

    console.rule("7. the supervisor approves; worker 4 revalidates and finalises")
    tether_cli(
        "approvals",
        "approve",
        str(state.wait_id),
        "--as",
        "sam",
        "--comment",
        "report checked",
        env=env,
    )
    start_worker(env, "worker-4").wait()

    console.rule("8. report")
    ok = report(settings, operator, run_id, service)
    tether_cli("audit", "verify", env=env)
    console.print(
        f"[dim]inspect: TETHER_URL={url} tether runs show {run_id} --tenant acme --as olivia[/dim]",
        highlight=False,
    )
    return 0 if ok else 1


def report(settings, operator, run_id: str, service: CaseService) -> bool:  # type: ignore[no-untyped-def]
    with Tether.open(settings) as app:
        run = app.runs.get(operator, run_id)
        events = app.runs.events(operator, run_id)
        checkpoints = app.runs.checkpoints(operator, run_id)
        journal = app.runs.journal(operator, run_id)
        final_state = app.runs.state(operator, run_id)

    timeline = Table("#", "event", "node", "ms", title="timeline")
    for event in events:
        timeline.add_row(
            str(event.seq),
            event.type,
            event.node or "",
            f"{event.duration_ms:.1f}" if event.duration_ms is not None else "",
        )
    console.print(timeline)

    table = Table("seq", "node", "next", "kind", "bytes", title="checkpoints")
    for checkpoint in checkpoints:
        table.add_row(
            str(checkpoint.seq),
            checkpoint.node or "(start)",
            checkpoint.next_node,
            checkpoint.kind,
            str(len(checkpoint.payload)),
        )
    console.print(table)

    calls = service.calls_by_key()
    effects = Table(
        "effect", "idempotency key", "status", "calls received", "applied", title="side effects"
    )
    ok = run.status is RunStatus.COMPLETED
    for entry in journal:
        if entry.kind.value != "effect":
            continue
        _operation, received, applied = calls.get(entry.idempotency_key, ("-", 0, 0))
        effects.add_row(
            entry.name, entry.idempotency_key, entry.status.value, str(received), str(applied)
        )
        ok = ok and applied == 1
    console.print(effects)
    steps = [e for e in journal if e.kind.value == "step" and e.tokens_in]
    for step in steps:
        console.print(
            f"model call {step.name}: {step.tokens_in} tokens in, {step.tokens_out} out, "
            f"${step.cost_usd}"
        )
    console.print(
        f"run {run.status.value} after {run.steps} steps; outcome: {final_state.get('outcome')}"
    )
    console.print(
        "[green]every side effect applied exactly once[/green]" if ok else "[red]FAILED[/red]"
    )
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
