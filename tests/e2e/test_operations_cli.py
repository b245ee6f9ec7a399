"""``tether gc``, ``retention``, ``housekeeping``, ``runs send|inbox`` and ``webhooks``
through the CLI, on a migrated SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel
from typer.testing import CliRunner

from tether import Tether
from tether.cli.main import app as cli_app
from tether.runs import END, RunContext, Workflow, WorkflowRegistry


class Note(BaseModel):
    text: str = ""


def test_retention_gc_housekeeping_inbox_and_webhooks_from_the_cli(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    app, _ = Tether.migrate(url=url)
    wf: Workflow[Note] = Workflow("chat", state=Note)

    @wf.node(start=True)
    def say(ctx: RunContext, s: Note) -> str:
        s.text = ctx.step("model", lambda: "hello")
        return END

    with app:
        app.tenants.create("acme", admin="alice")
        admin = app.tenants.principal("acme", "alice")
        app.tenants.grant(admin, "olga", ["operator"])
        finished = app.runs.start(admin, wf, Note())
        app.executor(WorkflowRegistry(wf), owner="w").execute("acme", finished.run_id)
        waiting = app.runs.start(admin, wf, Note())
    runner = CliRunner()

    def run(*args: str, actor: str = "olga") -> tuple[int, str]:
        result = runner.invoke(cli_app, [*args, "--tenant", "acme", "--as", actor, "--url", url])
        return result.exit_code, result.output

    def read(*args: str) -> object:
        result = runner.invoke(
            cli_app, [*args, "--json", "--tenant", "acme", "--as", "olga", "--url", url]
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert run("retention", "set", "chat", "--days", "0")[0] == 6
    assert run("retention", "set", "chat", "--days", "0", actor="alice")[0] == 0
    code, out = run("retention", "hold", finished.run_id, "--reason", " ", actor="alice")
    assert code == 3 and "needs a reason" in out
    assert run("retention", "hold", finished.run_id, "--reason", "case 17", actor="alice")[0] == 0
    assert read("gc", "--dry-run")["held"] == 1  # type: ignore[index]
    assert run("retention", "release", finished.run_id, "--reason", "closed", actor="alice")[0] == 0
    code, out = run("gc", "--vacuum")
    assert code == 0 and "compacted 1 of 1 runs" in out, out

    code, out = run("runs", "send", waiting.run_id, "--message", '{"text": "hi"}')
    assert code == 0 and "message 1 delivered" in out
    assert read("runs", "inbox", waiting.run_id)[0]["message"] == {"text": "hi"}  # type: ignore[index]
    code, out = run("runs", "send", finished.run_id, "--message", "late")
    assert code == 5

    assert read("housekeeping", "run")["runs"]["compacted"] == 0  # type: ignore[index]

    assert run("webhooks", "add", "https://hooks.example.com/t/x")[0] == 6
    assert run("webhooks", "allow", "https://hooks.example.com/t/", actor="alice")[0] == 0
    code, out = run("webhooks", "add", "https://hooks.example.com/t/x", "--event", "run.stuck")
    assert code == 0 and "run.stuck" in out
    assert read("webhooks", "ls") == []
    assert run("webhooks", "secret")[0] == 6
    code, out = run("webhooks", "secret", actor="alice")
    assert code == 0 and len(out.strip().splitlines()[-1]) == 64
