"""``tether threads`` and ``tether context`` through the CLI, on a migrated SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tether import Tether
from tether.cli.main import app as cli_app


def test_threads_create_append_show_and_context_build(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    migrated, _ = Tether.migrate(url=url)
    migrated.tenants.create("acme", admin="alice")
    migrated.close()
    runner = CliRunner()
    common = ["--tenant", "acme", "--as", "alice", "--url", url]

    created = runner.invoke(cli_app, ["threads", "create", "u-1", "--title", "bike", *common])
    assert created.exit_code == 0, created.output
    thread_id = created.stdout.strip().splitlines()[-1]
    for text in ("My chain slips.", "Replace the chain."):
        appended = runner.invoke(cli_app, ["threads", "append", thread_id, text, *common])
        assert appended.exit_code == 0, appended.output
    procedure = tmp_path / "staging.txt"
    procedure.write_text("Deploy to staging first.")

    shown = runner.invoke(cli_app, ["threads", "show", thread_id, "--json", *common])
    listed = runner.invoke(cli_app, ["threads", "ls", "--user", "u-1", "--json", *common])
    built = runner.invoke(
        cli_app,
        [
            "context",
            "build",
            thread_id,
            "--budget",
            "200",
            "--procedure",
            str(procedure),
            "--json",
            *common,
        ],
    )
    over = runner.invoke(
        cli_app,
        ["context", "build", thread_id, "--budget", "2", *common, "--procedure", str(procedure)],
    )
    missing = runner.invoke(cli_app, ["threads", "show", "nope", *common])

    assert [t["content"] for t in json.loads(shown.stdout)["turns"]] == [
        "My chain slips.",
        "Replace the chain.",
    ]
    assert [t["thread_id"] for t in json.loads(listed.stdout)] == [thread_id]
    context = json.loads(built.stdout)
    assert context["tokens"] <= 200 and "Deploy to staging first." in context["text"]
    assert "Replace the chain." in context["text"]
    assert over.exit_code == 3 and "context_over_budget" in over.output
    assert missing.exit_code == 4
