"""Run the tests a mapping names, with pytest in a subprocess, and read their outcomes
from its JUnit XML report.

Only SQLite runs (``-m "not postgres"``), so the report needs no server. A node id naming
a parametrised test counts every parameter it ran (``test_rule`` covers
``test_rule[plain fact]``, …).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class NodeOutcome:
    node_id: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    message: str = ""
    """The first line of the first failure, if any."""

    @property
    def outcome(self) -> str:
        if self.failed:
            return "failed"
        if self.passed:
            return "passed"
        return "skipped" if self.skipped else "not run"


@dataclass(frozen=True)
class PytestRun:
    command: str
    seconds: float
    outcomes: dict[str, NodeOutcome]
    problem: str | None = None
    """Why pytest gave no results for some tests (not installed, timed out, …)."""

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes.values() if o.outcome == outcome)


def run_tests(
    node_ids: Iterable[str], *, root: Path = ROOT, timeout_s: float = TIMEOUT_S
) -> PytestRun:
    """Run ``node_ids`` (relative to ``root``) once each and report every one's outcome."""
    wanted = list(dict.fromkeys(node_ids))
    shown = "python -m pytest -q -p no:cacheprovider -m 'not postgres' --junitxml=… <node ids>"
    if importlib.util.find_spec("pytest") is None:
        return PytestRun(shown, 0.0, {}, "pytest is not installed (pip install 'tether[dev]')")
    with tempfile.TemporaryDirectory() as scratch:
        xml = Path(scratch) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["-m", "not postgres", f"--junitxml={xml}", *wanted]
        started = time.monotonic()
        try:
            done = subprocess.run(
                command, cwd=root, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            return PytestRun(shown, timeout_s, {}, f"pytest did not finish in {timeout_s:.0f} s")
        seconds = time.monotonic() - started
        report = xml.read_text(encoding="utf-8") if xml.exists() else ""
    outcomes = parse_junit(report, wanted) if report else {}
    problem = None
    if not outcomes or any(o.outcome == "not run" for o in outcomes.values()):
        tail = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        problem = f"pytest exited {done.returncode}: " + " / ".join(tail[-3:])
    return PytestRun(shown, seconds, outcomes, problem)


def _junit_name(node_id: str) -> tuple[str, str]:
    """The (classname, name) a node id has in JUnit XML."""
    path, _, rest = node_id.partition("::")
    parts = rest.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return ".".join([module, *parts[:-1]]), parts[-1]


def parse_junit(xml_text: str, node_ids: Iterable[str]) -> dict[str, NodeOutcome]:
    cases = ElementTree.fromstring(xml_text).iter("testcase")  # our own report: trusted
    found = [(case.get("classname", ""), case.get("name", ""), case) for case in cases]
    outcomes = {}
    for node_id in node_ids:
        classname, name = _junit_name(node_id)
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        seconds, message = 0.0, ""
        for case_class, case_name, case in found:
            if case_class != classname or not (
                case_name == name or ("[" not in name and case_name.startswith(name + "["))
            ):
                continue
            seconds += float(case.get("time", "0") or 0)
            problem = case.find("failure")
            if problem is None:
                problem = case.find("error")
            if problem is not None:
                counts["failed"] += 1
                first = (problem.get("message") or problem.text or "").strip().splitlines()
                message = message or (first[0] if first else "failed")
            elif case.find("skipped") is not None:
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
        outcomes[node_id] = NodeOutcome(node_id, **counts, seconds=seconds, message=message)
    return outcomes
