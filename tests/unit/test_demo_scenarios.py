"""The demo report's parts that need no database: the scenario -> test mapping names tests
that exist, JUnit outcomes are read per mapped test, and the runbook follows the command
tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer.main
from examples.case_review.mapped_tests import parse_junit
from examples.case_review.record import DemoRecord
from examples.case_review.runbook import GROUPS, commands
from examples.case_review.scenarios import SCENARIO_TESTS, scenarios

from tether.cli.main import app as cli_app

ROOT = Path(__file__).resolve().parents[2]
MAPPED = sorted({node for nodes in SCENARIO_TESTS.values() for node in nodes})


def defined_tests(path: Path) -> set[str]:
    """``name`` and ``Class::name`` of every test function the module defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef):
            found.update(
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return {name for name in found if name.rsplit("::", 1)[-1].startswith("test_")}


@pytest.mark.parametrize("node_id", MAPPED)
def test_every_mapped_test_exists(node_id: str) -> None:
    path, _, name = node_id.partition("::")
    assert (ROOT / path).is_file(), f"{node_id}: no file {path}"
    assert name.split("[")[0] in defined_tests(ROOT / path), f"{node_id}: no such test"


def test_every_scenario_has_tests_and_every_mapping_a_scenario() -> None:
    keys = [scenario.key for scenario in scenarios(DemoRecord(url="sqlite://", tenant="t"))]
    assert sorted(keys) == sorted(SCENARIO_TESTS)
    assert all(SCENARIO_TESTS[key] for key in keys)


def test_nothing_is_observed_in_an_empty_record() -> None:
    found = scenarios(DemoRecord(url="sqlite://", tenant="t"))
    assert [s.observed for s in found] == [()] * len(found)


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.unit.test_a" name="test_one[x]" time="0.5"/>
<testcase classname="tests.unit.test_a" name="test_one[y]" time="0.25">
  <failure message="AssertionError: 1 != 2&#10;more">trace</failure>
</testcase>
<testcase classname="tests.unit.test_a" name="test_one_more" time="1.0"/>
<testcase classname="tests.unit.test_a.TestKind" name="test_two" time="0.1">
  <skipped message="no server"/>
</testcase>
<testcase classname="tests.unit.test_a" name="test_three" time="0.1">
  <error message="fixture failed"/>
</testcase>
</testsuite></testsuites>
"""


def test_junit_outcomes_are_counted_per_mapped_test() -> None:
    base = "tests/unit/test_a.py::"
    nodes = ["test_one", "test_one[x]", "TestKind::test_two", "test_three", "test_missing"]
    found = parse_junit(JUNIT, [base + node for node in nodes])

    one, one_x, two, three, missing = (found[base + node] for node in nodes)
    assert (one.passed, one.failed, one.outcome) == (1, 1, "failed")
    assert one.message == "AssertionError: 1 != 2"
    assert one.seconds == pytest.approx(0.75)
    assert (one_x.passed, one_x.failed, one_x.outcome) == (1, 0, "passed")
    assert two.outcome == "skipped"
    assert (three.outcome, three.message) == ("failed", "fixture failed")
    assert missing.outcome == "not run"


def test_the_runbook_lists_every_command_of_its_groups() -> None:
    root = typer.main.get_command(cli_app)
    listed = {command.path for command in commands()}
    for group in GROUPS:
        command = root.get_command(None, group)
        names = command.list_commands(None) if hasattr(command, "list_commands") else []
        expected = {(group, name) for name in names} or {(group,)}
        # a nested group (`memory policy`) is listed by its own commands
        assert all(any(path[: len(e)] == e for path in listed) for e in expected), group
    stuck = next(c for c in commands() if c.path == ("runs", "stuck"))
    assert stuck.usage == "tether runs stuck --tenant TENANT --as ACTOR"
    assert "--json" in stuck.options and "--url" not in stuck.options
    assert stuck.summary.startswith("Runs that will not move without an operator")
