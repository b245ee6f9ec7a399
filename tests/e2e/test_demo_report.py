"""``make demo`` end to end: the case review in real processes writes the Long-Running
Task Report, every section present and filled from the run; the report's test results,
checked on a tiny mapping of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from examples.case_review.mapped_tests import run_tests
from examples.case_review.report import SECTIONS, results_section

ROOT = Path(__file__).resolve().parents[2]


def sections(markdown: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", markdown, flags=re.M)
    return {
        title.strip(): body.strip() for title, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_the_demo_writes_every_section_of_the_report(tmp_path: Path) -> None:
    env = {**os.environ, "TETHER_EMBEDDER": "none"}
    done = subprocess.run(
        [sys.executable, "-m", "examples.case_review", "--dir", str(tmp_path), "--skip-tests"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    said = " ".join(done.stdout.split())
    database = f"sqlite:///{tmp_path / 'case-review.db'}"
    assert f"tether api-keys create olivia --tenant acme --as alice --url {database}" in said
    assert f"tether serve --url {database}" in said
    assert "http://127.0.0.1:8000/console and log in with that key" in said
    assert "pip install 'tether[server]'" in said

    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    found = sections(report)
    assert list(found) == list(SECTIONS)
    assert all(found[title] for title in SECTIONS), [t for t in SECTIONS if not found[t]]

    assert "| `outcome` | string or null |" in found["State schema"]
    assert "CREATE TABLE run_checkpoints" in found["Checkpoint schema"]
    assert "| clarification_required | waiting_for_user |" in found["Interrupt schema"]
    assert '"status": "rejected"' in found["Approval schema"]
    assert "| fact | 365 |" in found["Memory policy"]
    assert "was held: instruction_like" in found["Failure scenarios"]
    assert (
        "{tenant digest}:{run_id}:{node}:{visit}:{position}:{name}"
        in (found["Idempotency strategy"])
    )
    keys = re.findall(r"\| `([0-9a-f]{16}:[^`]+)` \| yes \| done \| 1 \| 1 \|", report)
    assert len(keys) == 4
    assert "NOT OBSERVED" not in report
    assert "`request_approval` -> `record_rejection`" in found["Resume scenarios"]
    assert "killed (exit -9)" in found["Failure scenarios"]
    assert "C-1001: compacted: events" in found["Retention expiration"]
    assert "C-1002: under a legal hold, kept whole" in found["Retention expiration"]
    assert "is `expired` after the pass" in found["Retention expiration"]
    assert "Not run: the demo was started with `--skip-tests`" in found["Test results"]
    assert "[docs/runbook.md](../" in found["Operational runbook"]
    assert "| `tether runs stuck --tenant TENANT --as ACTOR` |" in found["Operational runbook"]
    assert "| `tether approvals reject APPROVAL_ID" in found["Operational runbook"]


TINY = """
import pytest

def test_passes():
    assert True

@pytest.mark.parametrize("n", [1, 2])
def test_half(n):
    assert n == 1, f"{n} is not one"
"""


def test_the_test_results_section_on_a_tiny_mapping(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    mapping = {"works": ("test_tiny.py::test_passes",), "half": ("test_tiny.py::test_half",)}

    ran = run_tests([node for nodes in mapping.values() for node in nodes], root=tmp_path)
    text = "\n".join(results_section(ran, mapping))

    assert ran.problem is None
    assert (ran.count("passed"), ran.count("failed")) == (1, 1)
    assert "1 passed, 1 failed, 0 skipped, 0 not run" in text
    assert re.search(r"\| works \| `test_tiny.py::test_passes` \| passed \| 1/1 \|", text)
    assert re.search(r"\| half \| `test_tiny.py::test_half` \| failed: .*2 is not one", text)
    assert "| half | `test_tiny.py::test_half` |" in text and "| 1/2 |" in text
