"""``tether runs start`` and full ids in tables, as real processes on a SQLite file."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.e2e.test_cli import TETHER, TIMEOUT_S, Cli
from tether import Tether

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = "tests.e2e.cli_workflows:registry"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _python_path() -> str:
    return os.pathsep.join([str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])


def _acme(cli: Cli) -> Cli:
    app, _ = Tether.migrate(url=cli.url)
    with app:
        app.tenants.create("acme", admin="alice")
        admin = app.tenants.principal("acme", "alice")
        app.tenants.grant(admin, "bot", ["agent"])
        app.tenants.grant(admin, "bob", ["approver"])
    return cli


def _as(actor: str) -> list[str]:
    return ["--tenant", "acme", "--as", actor]


def test_runs_start_queues_a_run_a_worker_then_executes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cli = _acme(Cli(work, f"sqlite:///{tmp_path / 'cli.db'}"))
    env = {"PYTHONPATH": _python_path(), "TETHER_WORKFLOWS": WORKFLOWS}
    (work / "state.json").write_text('{"amount": 40}', encoding="utf-8")
    given_id = "01a20c22-0000-7000-8000-000000000001"

    inline = cli("runs", "start", "payment", "--input", '{"amount": 12}', *_as("bot"), **env)
    from_file = cli(
        "runs", "start", "payment@1", "--input", "@state.json", "--run-id", given_id,
        "--json", *_as("bot"), **env,
    )  # fmt: skip
    from_stdin = subprocess.run(
        [*TETHER, "runs", "start", "payment", "--input", "@-", "--json", *_as("bot")],
        input='{"amount": 7}',
        cwd=work,
        env=cli.environment(cli.url, env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )

    assert inline.returncode == 0, inline.stderr
    assert re.fullmatch(rf"run ({UUID.pattern}) payment@1: queued\n", inline.stdout)
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.json()["run_id"] == given_id
    assert from_file.json()["status"] == "queued"
    assert from_file.json()["created_by"] == "bot"
    assert from_stdin.returncode == 0, from_stdin.stderr

    worker = cli("worker", "--until-idle", **env)
    assert worker.returncode == 0, worker.stderr
    waiting = cli("approvals", "ls", "--json", *_as("bob")).json()
    assert len(waiting) == 3
    mine = next(w for w in waiting if w["run_id"] == given_id)
    assert mine["request"]["action"] == {"pay": 40}
    assert cli("approvals", "approve", mine["wait_id"], *_as("bob")).returncode == 0
    assert cli("worker", "--until-idle", **env).returncode == 0
    shown = cli("runs", "show", given_id, "--json", *_as("bob")).json()
    assert shown["run"]["status"] == "completed"
    assert shown["state"] == {"amount": 40, "outcome": "paid"}


def test_runs_start_refuses_bad_input_and_starts_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cli = _acme(Cli(work, f"sqlite:///{tmp_path / 'cli.db'}"))
    env = {"PYTHONPATH": _python_path(), "TETHER_WORKFLOWS": WORKFLOWS}
    taken = "01a20c22-0000-7000-8000-000000000002"
    assert cli(
        "runs", "start", "payment", "--input", '{"amount": 1}', "--run-id", taken,
        *_as("bot"), **env,
    ).returncode == 0  # fmt: skip

    cases = {
        "not an object": (["payment", "--input", "[1]"], 3, "must be a JSON object"),
        "not JSON": (["payment", "--input", "{amount"], 3, "not valid JSON"),
        "missing file": (["payment", "--input", "@nope.json"], 3, "cannot read 'nope.json'"),
        "state the workflow refuses": (["payment", "--input", '{"amount": "x"}'], 3, "amount"),
        "unknown workflow": (["refund", "--input", "{}"], 4, "no workflow named 'refund'"),
        "unknown version": (["payment@9", "--input", '{"amount": 1}'], 4, "payment@9"),
        "bad version": (["payment@new", "--input", '{"amount": 1}'], 3, "NAME@VERSION"),
        "existing run id": (
            ["payment", "--input", '{"amount": 1}', "--run-id", taken],
            5,
            "already exists",
        ),
        "not allowed": (["payment", "--input", '{"amount": 1}'], 6, "permission"),
    }
    results = cli.many(
        [
            ["runs", "start", *args, *_as("bob" if name == "not allowed" else "bot")]
            for name, (args, _, _) in cases.items()
        ],
        **env,
    )
    for (name, (_, code, said)), result in zip(cases.items(), results, strict=True):
        assert result.returncode == code, (name, result.stderr)
        assert said in result.said, (name, result.said)

    assert len(cli("runs", "ls", "--json", *_as("bot")).json()) == 1


def test_tables_print_whole_ids_on_an_80_column_terminal(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cli = _acme(Cli(work, f"sqlite:///{tmp_path / 'cli.db'}"))
    env = {"PYTHONPATH": _python_path(), "TETHER_WORKFLOWS": WORKFLOWS}
    started = cli(
        "runs", "start", "payment", "--input", '{"amount": 3}', "--json", *_as("bot"), **env
    )
    run_id = started.json()["run_id"]
    assert cli("worker", "--until-idle", **env).returncode == 0
    approval_id = cli("approvals", "ls", "--json", *_as("bob")).json()[0]["wait_id"]

    reviewer = "claims-reviewer-of-the-northern-region-night-shift-number-0042"
    assert cli("principals", "add", reviewer, "-r", "viewer", *_as("alice")).returncode == 0

    runs, approvals, trail, principals = cli.many(
        [
            ["runs", "ls", *_as("bob")],
            ["approvals", "ls", *_as("bob")],
            ["audit", "ls", *_as("bob")],
            ["principals", "ls", *_as("alice")],
        ],
        COLUMNS="80",
    )

    assert {runs.returncode, approvals.returncode, trail.returncode, principals.returncode} == {0}
    assert UUID.findall(runs.stdout) == [run_id]
    assert UUID.findall(approvals.stdout) == [approval_id, run_id]
    assert run_id in UUID.findall(trail.stdout) and reviewer in trail.stdout
    assert reviewer in principals.stdout
    shown = cli("approvals", "show", UUID.findall(approvals.stdout)[0], *_as("bob"))
    assert shown.returncode == 0 and run_id in shown.stdout
