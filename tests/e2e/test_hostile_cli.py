"""The ``tether`` command under hostile input and with hostile stored text.

- Stored text that looks like terminal markup comes out verbatim from every command that
  prints it, with and without ``--json``.
- A PostgreSQL password holding ``/ # ? % @`` never appears in any command's output.
- Invalid UTF-8 in an argument or on stdin, an unknown status, an empty or oversized
  memory: ``invalid_input`` (exit 3), no traceback, nothing changed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from pydantic import BaseModel
from typer.testing import CliRunner

from tests.e2e.test_cli import COMMAND_PATHS, TETHER, TIMEOUT_S, Cli, Result, command_at
from tests.hostile_support import database_rows
from tests.support import TestDatabase
from tether import Tether
from tether.cli.main import app as cli_app
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType
from tether.runs import END, RunContext, Workflow, WorkflowRegistry
from tether.threads.models import NewTurn, TurnRole

MARK = "[/bold] pay [conceal]and 9000 EUR to x[/conceal] :smile: ^{0,99}$ [/]"
"""Stored text a markup renderer would choke on, hide, or rewrite."""
AS = ["--tenant", "acme", "--as", "alice"]


def marked(what: str) -> str:
    return f"{what} {MARK}"


class Transfer(BaseModel):
    note: str = ""
    approved: bool | None = None


def transfer_workflow() -> Workflow[Transfer]:
    wf: Workflow[Transfer] = Workflow("transfer", state=Transfer)

    @wf.node
    def ask(ctx: RunContext, s: Transfer) -> str:
        decision = ctx.approval(
            {"pay": marked("action")},
            title=marked("title"),
            rationale=marked("rationale"),
            evidence=[marked("evidence")],
            alternatives=[marked("alternative")],
            on_approve=marked("on-approve"),
        )
        s.approved = decision.status.value == "approved"
        return END

    return wf


SKILL = """
kind: skill
name: careful-payments
description: "{description}"
steps:
  - "{step}"
"""


@dataclass(frozen=True)
class Seeded:
    cli: Cli
    database: TestDatabase
    memory_id: str
    thread_id: str
    run_id: str
    wait_id: str
    procedures: Path


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    """A SQLite database whose stored text is markup-like everywhere the CLI prints it."""
    path = tmp_path / "hostile.db"
    url = f"sqlite:///{path}"
    procedures = tmp_path / "procedures"
    procedures.mkdir()
    (procedures / "skill.yaml").write_text(
        SKILL.format(description=marked("description"), step=marked("step"))
    )
    app, _ = Tether.migrate(url=url)
    with app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        app.tenants.grant(alice, "agent", ["agent"])
        agent = app.tenants.principal("acme", "agent")
        decision = app.memory.propose(
            alice,
            MemoryProposal(
                text=marked("memory"),
                kind=MemoryKind.FACT,
                scope=Scope.USER,
                scope_id="u-1",
                source_type=SourceType.HUMAN,
                confidence=0.9,
            ),
        )
        thread = app.threads.create(alice, "u-1", title=marked("thread"))
        app.threads.append(
            alice, thread.thread_id, NewTurn(role=TurnRole.USER, content=marked("turn"))
        )
        workflow = transfer_workflow()
        run = app.runs.start(agent, workflow, Transfer(note=marked("note")))
        app.executor(WorkflowRegistry(workflow), owner="w").execute("acme", run.run_id)
        [wait] = app.runs.waits(alice, run_id=run.run_id)
        app.procedures.publish(alice, procedures)
    assert decision.memory_id is not None
    work = tmp_path / "work"
    work.mkdir()
    return Seeded(
        cli=Cli(work, url),
        database=TestDatabase("sqlite", url, path=path),
        memory_id=decision.memory_id,
        thread_id=thread.thread_id,
        run_id=run.run_id,
        wait_id=wait.wait_id,
        procedures=procedures,
    )


def printing_commands(s: Seeded) -> dict[str, tuple[list[str], list[str]]]:
    """Each command that prints stored text: its arguments and the texts it must show."""
    return {
        "memory show": (["memory", "show", s.memory_id, *AS], ["memory"]),
        "memory history": (["memory", "history", s.memory_id, *AS], ["memory"]),
        "memory recall": (["memory", "recall", "pay", "-s", "user:u-1", *AS], ["memory"]),
        "threads ls": (["threads", "ls", *AS], ["thread"]),
        "threads show": (["threads", "show", s.thread_id, *AS], ["turn"]),
        "context build": (
            ["context", "build", s.thread_id, "--budget", "2000", "--query", "pay", *AS],
            ["turn", "memory"],
        ),
        "approvals ls": (["approvals", "ls", *AS], ["title"]),
        "approvals show": (
            ["approvals", "show", s.wait_id, *AS],
            ["title", "rationale", "evidence", "alternative", "on-approve", "action"],
        ),
        "runs show": (["runs", "show", s.run_id, *AS], ["title", "note"]),
        "runs handoff": (["runs", "handoff", s.run_id, *AS], ["title"]),
        "procedures show": (["procedures", "show", *AS], ["description", "step"]),
        "procedures check": (["procedures", "check", str(s.procedures)], []),
    }


def json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


@pytest.mark.parametrize("json_mode", [False, True], ids=["text", "json"])
def test_stored_markup_like_text_comes_out_verbatim(seeded: Seeded, json_mode: bool) -> None:
    commands = printing_commands(seeded)
    results = seeded.cli.many(
        [args + (["--json"] if json_mode else []) for args, _ in commands.values()],
        COLUMNS="400",
        TETHER_EMBEDDER="none",
    )
    for (name, (_, expected)), result in zip(commands.items(), results, strict=True):
        assert result.returncode == 0, (name, result.stderr)
        assert "Traceback" not in result.stderr, name
        for what in expected:
            if json_mode:
                strings = list(json_strings(result.json()))
                assert any(marked(what) in text for text in strings), (name, what)
            else:
                assert marked(what) in result.stdout, (name, what, result.stdout)
    check = results[-1]
    assert (check.json()["skills"] == 1) if json_mode else ("ok: 1 skill(s)" in check.stdout)


def test_a_validation_message_keeps_its_brackets(seeded: Seeded, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "p.yaml").write_text(
        "kind: policy\nname: p\ndescription: d\nseverity: hard\naction: forbid\n"
        "match:\n  effects: ['x']\n  conditions: [{field: 'a[0]', op: eq, value: 1}]\n"
    )
    result = seeded.cli("procedures", "check", str(bad))
    assert result.returncode == 3
    assert "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$" in result.said


# -- secrets in connection strings -----------------------------------------------------

PASSWORDS = [f"Xy7{char}kQ9pLm2" for char in "/#?%@"]
COMMAND = typer.main.get_command(cli_app)
LEAF_COMMANDS = [
    path
    for path in COMMAND_PATHS
    if path and not getattr(command_at(path), "commands", None) and path != ("demo",)
]


def arguments_for(path: tuple[str, ...], tmp_path: Path) -> list[str]:
    """The command with a plausible value for every required parameter."""
    values = {
        "budget": "100",
        "checkpoint": "0",
        "days": "30",
        "role": "viewer",
        "scope": "user:u-1",
        "directory": str(tmp_path),
    }
    args = list(path)
    for param in command_at(path).params:
        if not param.required:
            continue
        value = values.get(str(param.name), "x")
        if param.param_type_name == "argument":
            args.append(value)
        else:
            args += [param.opts[0], value]
    return args


def invocations(path: tuple[str, ...], url: str, tmp_path: Path) -> list[tuple[list[str], str]]:
    """The command with the URL in ``TETHER_URL``, then in ``--url`` with ``--json``."""
    names = {param.name for param in command_at(path).params}
    args = arguments_for(path, tmp_path)
    json_flag = ["--json"] if names & {"json_output", "json_mode"} else []
    if "url" in names:
        return [(args, url), ([*args, "--url", url, *json_flag], "")]
    return [(args, url), ([*args, *json_flag], url)] if json_flag else [(args, url)]


@pytest.mark.parametrize("password", PASSWORDS, ids=[f"char-{c}" for c in "/#?%@"])
@pytest.mark.parametrize("encoded", [False, True], ids=["raw", "percent-encoded"])
def test_no_command_prints_the_database_password(
    password: str, encoded: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raw, the URL is refused by the settings; percent-encoded, the connection fails
    (nothing listens on port 1). Either way no output holds the password or a piece of it."""
    written = password.replace("%", "%25").replace("/", "%2F").replace("#", "%23")
    written = written.replace("?", "%3F").replace("@", "%40") if encoded else password
    url = f"postgresql://app:{written}@127.0.0.1:1/tether"
    # The runner builds the click command from the app on every call; build it once.
    monkeypatch.setattr(typer.testing, "_get_command", lambda app: COMMAND)
    runner = CliRunner()
    for path in LEAF_COMMANDS:
        for args, env_url in invocations(path, url, tmp_path):
            env = {"TETHER_URL": env_url or None, "TETHER_PG_CONNECT_TIMEOUT_S": "1"}
            result = runner.invoke(cli_app, args, env=env)
            shown = result.stdout + result.stderr
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                args,
                result.exception,
            )
            if path != ("procedures", "check"):  # the one command that opens no database
                assert result.exit_code in (3, 7), (args, shown)
            for secret in (password, written, "kQ9pLm2", "Xy7"):
                assert secret not in shown, (args, shown)


# -- hostile arguments and stdin -------------------------------------------------------


def run_bytes(cli: Cli, *args: bytes, stdin: bytes = b"") -> Result:
    process = subprocess.run(
        [*(a.encode() for a in TETHER), *args],
        cwd=cli.cwd,
        env=cli.environment(cli.url, {"TETHER_EMBEDDER": "none"}),
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    return Result(
        [a.decode("utf-8", "replace") for a in args],
        process.returncode,
        process.stdout.decode("utf-8", "replace"),
        process.stderr.decode("utf-8", "replace"),
    )


def test_hostile_arguments_exit_3_without_a_traceback_and_change_nothing(seeded: Seeded) -> None:
    before = database_rows(seeded.database)
    cli = seeded.cli
    as_alice = [a.encode() for a in AS]
    cases = [
        run_bytes(cli, b"memory", b"propose", b"caf\xe9 \xff", b"--scope", b"user:u-1", *as_alice),
        run_bytes(cli, b"memory", b"recall", b"\xff\xfe", b"-s", b"user:u-1", *as_alice),
        run_bytes(cli, b"memory", b"show", b"\xff", *as_alice),
        run_bytes(cli, b"threads", b"create", b"u-\xff", *as_alice),
        run_bytes(
            cli,
            b"threads",
            b"append",
            seeded.thread_id.encode(),
            b"-",
            *as_alice,
            stdin=b"bad \xff\xfe",
        ),
        run_bytes(cli, b"memory", b"export", b"u\xc3", *as_alice),
    ]
    more = cli.many(
        TETHER_EMBEDDER="none",
        commands=[
            ["runs", "ls", "--status", "bogus", *AS],
            ["runs", "ls", "--status", "bogus", *AS, "--json"],
            ["memory", "propose", "", "--scope", "user:u-1", *AS],
            ["memory", "propose", "x" * 8001, "--scope", "user:u-1", *AS],
            [
                "memory",
                "propose",
                "nul \x01 ok",
                "--scope",
                "user:u-1",
                "--fact-key",
                "k" * 300,
                *AS,
            ],
            ["threads", "create", "u-1", "--title", "t", "--retention-days", "-1", *AS],
            ["context", "build", seeded.thread_id, "--budget", "-5", *AS],
            ["runs", "answer", "0", "--answer", "[" * 100_000, *AS],
        ],
    )
    for result in [*cases, *more]:
        assert result.returncode == 3, (result.args, result.returncode, result.stderr)
        assert "Traceback" not in result.stderr + result.stdout, result.args
        assert "error[invalid_input]" in result.stderr, (result.args, result.stderr)
    assert "status 'bogus'" in more[0].said
    assert more[1].json()["error"]["code"] == "invalid_input"
    assert "text" in more[2].said and "text" in more[3].said
    assert database_rows(seeded.database) == before
