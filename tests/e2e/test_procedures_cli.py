"""``tether procedures check / publish / show`` against a SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tether import Tether
from tether.cli.main import app as cli_app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "procedures"

CONTRADICTING = """
kind: policy
name: {name}
description: {name}
severity: hard
action: {action}
match:
  effects: ["shell.run"]
"""


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_passes_the_examples_and_fails_a_malformed_directory(tmp_path: Path) -> None:
    code, out, _ = invoke("procedures", "check", str(EXAMPLES), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["errors"] == [] and report["policies"] == 3

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "p.yaml").write_text(CONTRADICTING.format(name="p", action="maybe"))
    code, _, err = invoke("procedures", "check", str(bad))
    assert code == 3
    assert "p.yaml: field action" in " ".join(err.split())


def test_check_prints_contradictions_as_warnings(tmp_path: Path) -> None:
    for name, action in (("ask", "require_approval"), ("block", "forbid")):
        (tmp_path / f"{name}.yaml").write_text(CONTRADICTING.format(name=name, action=action))
    code, _, err = invoke("procedures", "check", str(tmp_path))
    said = " ".join(err.split())
    assert code == 0
    assert "warning: policies 'ask' (ask.yaml) and 'block' (block.yaml) have the same match" in said


def test_publish_then_show(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tether.db'}"
    app, _ = Tether.migrate(url=url)
    app.tenants.create("acme", admin="alice")
    app.close()
    common = ["--tenant", "acme", "--as", "alice", "--url", url]

    code, out, _ = invoke("procedures", "publish", str(EXAMPLES), *common, "--json")
    assert code == 0
    version = json.loads(out)["version"]
    code, out, _ = invoke("procedures", "show", *common, "--json")
    assert code == 0
    shown = json.loads(out)
    assert shown["version"] == version and shown["by"] == "alice"
    code, out, _ = invoke("procedures", "show", *common)
    assert code == 0
    assert "never-delete-production-data (forbidden)" in out


def test_a_worker_refuses_a_procedures_folder_without_tenants(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tether.db'}"
    Tether.migrate(url=url)[0].close()
    worker = ["worker", "--workflows", "examples.case_review.workflow:registry", "--url", url]

    code, _, err = invoke(*worker, "--procedures", str(EXAMPLES), "--until-idle")
    assert code == 3
    assert "names no tenants" in " ".join(err.split())

    code, _, err = invoke(
        *worker, "--procedures", str(EXAMPLES), "--tenant", "acme", "--until-idle"
    )
    assert code == 0, err


def test_history_names_who_published_each_version(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tether.db'}"
    app, _ = Tether.migrate(url=url)
    app.tenants.create("acme", admin="alice")
    app.tenants.grant(app.tenants.principal("acme", "alice"), "vic", ["viewer"])
    app.close()
    common = ["--tenant", "acme", "--url", url]

    assert invoke("procedures", "publish", str(EXAMPLES), *common, "--as", "alice")[0] == 0
    code, out, err = invoke("procedures", "history", *common, "--as", "vic", "--json")

    assert code == 0, err
    assert [row["published_by"] for row in json.loads(out)] == ["alice"]
