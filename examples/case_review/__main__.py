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
8. C-1001's record: timeline, checkpoints, each effect with its key and how many calls
   the case service received for it;
9. the second case, C-1002, is rejected with the CLI and its run takes the reject path;
10. the runs propose what they learnt through the memory write policy: the approved
    claim's outcome is remembered, the claimant's authority-claiming note is held;
11. a run retention policy and a legal hold are set with the CLI, and the housekeeping
    pass runs on a clock moved 400 days ahead: C-1001 is compacted (its effect keys
    kept), the held C-1002 is kept whole, the remembered fact expires;
12. the tests that cover each scenario run (unless ``--skip-tests``) and the
    Long-Running Task Report is written to ``<dir>/report.md``; the audit trail is verified.

Exits non-zero if any side effect was applied more than once, a run did not end as it
should, a scenario was not observed or a mapped test failed.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

from rich.table import Table

from examples.case_review import governance, report
from examples.case_review.mapped_tests import PytestRun, run_tests
from examples.case_review.processes import console, start_worker, tether_cli, wait_for
from examples.case_review.record import CaseRun, DemoRecord, capture
from examples.case_review.scenarios import SCENARIO_TESTS, scenarios
from examples.case_review.service import CaseService
from examples.case_review.workflow import CaseReview, case_review
from tether import Tether, load_settings
from tether.config import Settings
from tether.principals import Principal
from tether.runs import RunStatus

TENANT = "acme"
EVIDENCE_C1002 = "Roofer's quote RQ-118 and photos of the roof, uploaded 2026-11-21"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dir", type=Path, default=Path("demo-output"), help="where the databases go"
    )
    parser.add_argument(
        "--skip-tests",
        action="store_true",
        help="write the report without running the tests that cover each scenario",
    )
    args = parser.parse_args()
    directory: Path = args.dir.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    for old in [
        *directory.glob("case-review.db*"),
        *directory.glob("case-service.db*"),
        directory / "killed.marker",
        directory / "report.md",
    ]:
        old.unlink(missing_ok=True)
    url = f"sqlite:///{directory / 'case-review.db'}"
    service_db = directory / "case-service.db"
    env = {
        **os.environ,
        "TETHER_URL": url,
        "CASE_SERVICE_DB": str(service_db),
        "TETHER_TENANT": TENANT,
    }
    record = DemoRecord(url=url, tenant=TENANT)

    console.rule("1. a fresh database, a tenant, its principals, the case service")
    tether_cli("migrate", env=env)
    tether_cli("tenants", "create", TENANT, "--name", "Acme Insurance", "--admin", "alice", env=env)
    for principal, role in (("case-agent", "agent"), ("olivia", "operator"), ("sam", "approver")):
        tether_cli("principals", "add", principal, "--role", role, "--as", "alice", env=env)
    service = CaseService(service_db)
    service.seed()
    settings = load_settings(url=url)
    with Tether.open(settings) as app:
        agent = app.tenants.principal(TENANT, "case-agent")
        operator = app.tenants.principal(TENANT, "olivia")

    first_run = first_case(settings, env, agent, operator, directory / "killed.marker", record)
    console.rule("8. C-1001's record")
    with Tether.open(settings) as app:
        approved = capture(app, operator, first_run, "C-1001", service)
    ok = show_run(approved)

    console.rule(
        "9. the second case, C-1002: the supervisor rejects, the run takes its reject path"
    )
    rejected = second_case(settings, env, agent, operator, service)
    ok = ok and show_rejection(rejected)
    record.cases = {"C-1001": approved, "C-1002": rejected}

    console.rule("10. the runs propose what they learnt; the memory write policy decides")
    with Tether.open(settings) as app:
        record.policy = app.memory.policy(operator)
        record.memory = governance.propose(app, agent, operator, approved, rejected)
    tether_cli("memory", "pending", "--as", "sam", env=env)

    console.rule("11. retention: a policy, a legal hold, and the housekeeping pass 400 days later")
    record.retention = governance.expire(
        settings, env, operator, record.cases, rejected, record.memory
    )

    console.rule("12. the Long-Running Task Report")
    ok = write_report(record, directory, skip_tests=args.skip_tests) and ok
    tether_cli("audit", "verify", env=env)
    console.print(
        f"[dim]inspect: TETHER_URL={url} tether runs show {first_run} --tenant acme --as olivia"
        "[/dim]",
        highlight=False,
    )
    console.print(
        "open the operator console on the demo database (needs the server extra: "
        "pip install 'tether[server]'):\n"
        f"  tether api-keys create olivia --tenant {TENANT} --as alice --url {url}"
        "   # prints olivia's key, once\n"
        f"  tether serve --url {url}\n"
        "  then browse to http://127.0.0.1:8000/console and log in with that key",
        markup=False,
        highlight=False,
    )
    return 0 if ok else 1


def first_case(
    settings: Settings,
    env: dict[str, str],
    agent: Principal,
    operator: Principal,
    marker: Path,
    record: DemoRecord,
) -> str:
    """C-1001: a question, a worker killed mid-effect, a takeover, an approval."""
    console.rule("2. start the run")
    with Tether.open(settings) as app:
        run_id = app.runs.start(agent, case_review, CaseReview(case_id="C-1001")).run_id
    console.print(f"run {run_id} queued")

    console.rule("3. worker 1 runs until the run needs the missing evidence")
    start_worker(env, "worker-1").wait()
    with Tether.open(settings) as app:
        state = app.runs.get(operator, run_id)
    console.print(f"run is {state.status.value}; question {state.wait_id}")

    console.rule("4. answer the clarification")
    answer = '"Loss adjuster report LA-5521, uploaded 2026-11-20"'
    tether_cli("runs", "answer", str(state.wait_id), "--as", "olivia", "--answer", answer, env=env)

    console.rule("5. worker 2 creates the case note and is killed before recording it")
    crash_env = {**env, "CASE_SERVICE_PAUSE_AFTER": "add_note", "CASE_SERVICE_MARKER": str(marker)}
    victim = start_worker(crash_env, "worker-2")
    wait_for(marker.exists, "the case service to apply the note")
    os.kill(victim.pid, signal.SIGKILL)
    record.killed["worker-2"] = victim.wait()
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
    approve = ("approvals", "approve", str(state.wait_id), "--as", "sam")
    tether_cli(*approve, "--comment", "report checked", env=env)
    start_worker(env, "worker-4").wait()
    return run_id


def second_case(
    settings: Settings,
    env: dict[str, str],
    agent: Principal,
    operator: Principal,
    service: CaseService,
) -> CaseRun:
    """C-1002, started with its evidence: to the approval wait, rejected, the reject path."""
    with Tether.open(settings) as app:
        state = CaseReview(case_id="C-1002", evidence=EVIDENCE_C1002)
        run_id = app.runs.start(agent, case_review, state).run_id
    console.print(f"run {run_id} queued for C-1002, its evidence given at the start")
    start_worker(env, "worker-5").wait()
    with Tether.open(settings) as app:
        approval = app.runs.get(operator, run_id).wait_id
    tether_cli("approvals", "show", str(approval), "--as", "sam", env=env)
    comment = "The quote predates the storm; ask for an independent assessment"
    tether_cli("approvals", "reject", str(approval), "--as", "sam", "--comment", comment, env=env)
    start_worker(env, "worker-6").wait()
    with Tether.open(settings) as app:
        return capture(app, operator, run_id, "C-1002", service)


def show_timeline(case: CaseRun) -> None:
    timeline = Table("#", "event", "node", "ms", title=f"timeline of {case.case_id}")
    for event in case.events:
        timeline.add_row(
            str(event.seq),
            event.type,
            event.node or "",
            f"{event.duration_ms:.1f}" if event.duration_ms is not None else "",
        )
    console.print(timeline)


def show_run(case: CaseRun) -> bool:
    """C-1001's timeline, checkpoints and effects; whether each effect applied once."""
    show_timeline(case)
    table = Table("seq", "node", "next", "kind", "bytes", title="checkpoints")
    for checkpoint in case.checkpoints:
        table.add_row(
            str(checkpoint.seq),
            checkpoint.node or "(start)",
            checkpoint.next_node,
            checkpoint.kind,
            str(len(checkpoint.payload)),
        )
    console.print(table)
    effects = Table(
        "effect", "idempotency key", "status", "calls received", "applied", title="side effects"
    )
    ok = case.run.status is RunStatus.COMPLETED
    for entry in case.effects():
        _operation, received, applied = case.calls.get(entry.idempotency_key, ("-", 0, 0))
        effects.add_row(
            entry.name, entry.idempotency_key, entry.status.value, str(received), str(applied)
        )
        ok = ok and applied == 1
    console.print(effects)
    for step in case.journal:
        if step.kind.value == "step" and step.tokens_in:
            console.print(
                f"model call {step.name}: {step.tokens_in} tokens in, {step.tokens_out} out, "
                f"${step.cost_usd}"
            )
    console.print(
        f"run {case.run.status.value} after {case.run.steps} steps; "
        f"outcome: {case.state.get('outcome')}"
    )
    console.print(
        "[green]every side effect applied exactly once[/green]" if ok else "[red]FAILED[/red]"
    )
    return ok


def show_rejection(case: CaseRun) -> bool:
    """What the run did on reject; whether it ended as the reject path says."""
    show_timeline(case)
    path = [e.node for e in case.events if e.type == "node.completed"]
    effects = [e.name for e in case.effects()]
    console.print(f"path: {' -> '.join(str(node) for node in path)}", highlight=False)
    console.print(
        f"run {case.run.status.value}; outcome: {case.state.get('outcome')}; effects: "
        f"{', '.join(effects)}; case {case.case_id} is {case.case['status']}; last note: "
        f"{case.notes[-1] if case.notes else '-'}",
        highlight=False,
    )
    return (
        case.run.status is RunStatus.COMPLETED
        and path[-1] == "record_rejection"
        and "finalise_case" not in effects
        and case.case["status"] == "open"
    )


def write_report(record: DemoRecord, directory: Path, *, skip_tests: bool) -> bool:
    """Run the mapped tests (unless skipped), write the report; whether every scenario was
    observed and no mapped test failed."""
    tests: PytestRun | None = None
    if not skip_tests:
        nodes = [node for group in SCENARIO_TESTS.values() for node in group]
        console.print(f"running the {len(nodes)} tests that cover the scenarios (SQLite)")
        tests = run_tests(nodes)
        console.print(
            f"tests: {tests.count('passed')} passed, {tests.count('failed')} failed, "
            f"{tests.count('not run')} not run in {tests.seconds:.1f} s"
            + (f"; {tests.problem}" if tests.problem else "")
        )
    found = scenarios(record)
    missing = [s.title for s in found if not s.observed]
    for scenario in found:
        mark = "[green]observed[/green]" if scenario.observed else "[red]NOT OBSERVED[/red]"
        console.print(f"{mark} ({scenario.kind}) {scenario.title}")
    path = directory / "report.md"
    path.write_text(report.render(record, tests, directory), encoding="utf-8")
    console.print(f"wrote {path} ({len(report.SECTIONS)} sections)", highlight=False)
    failed = tests is not None and (tests.count("failed") or tests.problem)
    return not missing and not failed


if __name__ == "__main__":
    raise SystemExit(main())
