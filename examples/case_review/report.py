"""The Long-Running Task Report (``demo-output/report.md``), generated, never written by
hand.

The schemas come from the pydantic models and the SQLite schema of the code; the memory
policy from the configuration in effect for the tenant; the idempotency strategy from the
key-building function and the keys in this run's journal; the scenarios from what the
runs stored; the test results from pytest; the runbook from the ``tether`` command tree.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from scripts.gen_runs_doc import model_table

import tether.storage.sqlite
from examples.case_review import runbook
from examples.case_review.mapped_tests import PytestRun
from examples.case_review.record import CaseRun, DemoRecord
from examples.case_review.scenarios import SCENARIO_TESTS, Scenario, scenarios
from examples.case_review.workflow import CaseReview
from tether.memory.policy import RULES
from tether.runs.claim import idempotency_key
from tether.runs.models import (
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
    InterruptReason,
    JournalEntry,
    Wait,
)

TITLE = "Long-Running Task Report: the case review"
SECTIONS = (
    "State schema",
    "Checkpoint schema",
    "Interrupt schema",
    "Approval schema",
    "Memory policy",
    "Idempotency strategy",
    "Resume scenarios",
    "Failure scenarios",
    "Retention expiration",
    "Test results",
    "Operational runbook",
)
SCHEMA_SQL = Path(tether.storage.sqlite.__file__).parent / "schema.sql"
ROOT = Path(__file__).resolve().parents[2]


def sql_table(name: str) -> list[str]:
    """The ``CREATE TABLE`` statement of ``name`` in the code's SQLite schema."""
    text = SCHEMA_SQL.read_text(encoding="utf-8")
    found = re.search(rf"^CREATE TABLE {name} \(.*?^\)[^;]*;", text, re.S | re.M)
    if found is None:
        raise LookupError(f"no table {name} in {SCHEMA_SQL.name}")
    return ["```sql", found.group(0), "```"]


def model(title: str, cls: type[BaseModel], where: str) -> list[str]:
    own = cls.__dict__.get("__doc__") or ""
    doc = " ".join(inspect.cleandoc(own).split("\n\n")[0].split())
    return [f"**{title}** (`{where}`){': ' + doc if doc else ''}", "", *model_table(cls), ""]


def fenced_json(value: Any) -> list[str]:
    return ["```json", json.dumps(value, indent=2, sort_keys=True, default=str), "```"]


def table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> list[str]:
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = [f"| {' | '.join(header)} |", f"|{'---|' * len(header)}"]
    return lines + [f"| {' | '.join(cell(v) for v in row)} |" for row in rows]


# -- sections ------------------------------------------------------------------------------


def state_schema(record: DemoRecord) -> list[str]:
    lines = model("CaseReview", CaseReview, "examples/case_review/workflow.py")
    lines += [
        "The state lives in checkpoints; the run row says where the run is "
        "(`tether.runs.models.Run`, table `runs`):",
        "",
        *sql_table("runs"),
        "",
    ]
    for case, run in record.cases.items():
        lines += [f"Final state of {case} (run `{run.run.run_id}`, {run.run.status.value}):", ""]
        lines += [*fenced_json(run.state), ""]
    return lines


def checkpoint_schema(record: DemoRecord) -> list[str]:
    lines = model("Checkpoint", Checkpoint, "tether.runs.models.Checkpoint")
    lines += [*sql_table("run_checkpoints"), ""]
    for case, run in record.cases.items():
        lines += [f"Checkpoints of {case}:", ""]
        lines += table(
            ("seq", "node", "next", "kind", "bytes", "written at"),
            [
                (c.seq, c.node or "(start)", c.next_node, c.kind, len(c.payload), c.created_at)
                for c in run.checkpoints
            ],
        )
        lines.append("")
    return lines


def interrupt_schema(record: DemoRecord) -> list[str]:
    lines = model("Wait", Wait, "tether.runs.models.Wait")
    lines += ["Each reason puts the run in one waiting status (`InterruptReason.status`):", ""]
    lines += table(
        ("reason", "status while waiting"), [(r.value, r.status.value) for r in InterruptReason]
    )
    lines += ["", *sql_table("run_waits"), "", "The waits of this run:", ""]
    lines += table(
        ("case", "wait", "reason", "status", "message", "resolved by"),
        [
            (case, f"`{w.wait_id}`", w.reason.value, w.status.value, w.message, w.resolved_by)
            for case, run in record.cases.items()
            for w in run.waits
        ],
    )
    return lines


def approval_schema(record: DemoRecord) -> list[str]:
    lines = model("ApprovalRequest", ApprovalRequest, "tether.runs.models.ApprovalRequest")
    lines += model("ApprovalDecision", ApprovalDecision, "tether.runs.models.ApprovalDecision")
    for case, run in record.cases.items():
        for wait in run.waits:
            if wait.reason is InterruptReason.APPROVAL_REQUIRED:
                lines += [f"The approval request of {case}, as stored (`run_waits.request`):", ""]
                lines += [*fenced_json(wait.request), ""]
        if run.state.get("approval"):
            lines += [
                f"The decision {case}'s run received:",
                "",
                *fenced_json(run.state["approval"]),
                "",
            ]
    return lines


def memory_policy(record: DemoRecord) -> list[str]:
    if record.policy is None:
        return ["No memory policy was read."]
    config = record.policy.model_dump(mode="json")
    retention = config.pop("retention_days")
    lines = [f"In effect for tenant `{record.tenant}` (`tether.memory.policy.PolicyConfig`):", ""]
    lines += table(("setting", "value"), [(k, v) for k, v in config.items()])
    lines += ["", "Retention per kind of memory (days; empty: kept until changed):", ""]
    lines += table(("kind", "days"), [(k, "" if v is None else v) for k, v in retention.items()])
    fired = {r.rule for w in record.memory for r in w.decision.reasons}
    lines += ["", "Rules, in the order they run (the strictest answer wins):", ""]
    lines += table(
        ("rule", "enabled", "answered in this run"),
        [
            (
                f"`{name}`",
                "no" if name in record.policy.disabled_rules else "yes",
                "yes" if name in fired else "",
            )
            for name in RULES
        ],
    )
    lines += ["", "Proposals made by the runs:", ""]
    lines += table(
        ("case", "text (redacted)", "source", "verdict", "reasons", "memory", "expires"),
        [
            (
                w.case_id,
                w.decision.redacted_text,
                f"{w.proposal.source_type.value} `{w.proposal.source_ref}`",
                w.decision.verdict.value,
                "; ".join(f"{r.rule}: {r.reason}" for r in w.decision.reasons) or "none",
                f"`{w.stored.memory_id}` {w.stored.status.value}" if w.stored else "not stored",
                (w.stored.expires_at if w.stored and w.stored.expires_at else "never"),
            )
            for w in record.memory
        ],
    )
    return lines


def idempotency_strategy(record: DemoRecord) -> list[str]:
    sample = idempotency_key("<tenant>", "{run_id}", "{node}", 1, 2, "{name}")
    digest = sample.split(":", 1)[0]
    shape = sample.replace(digest, "{tenant digest}").replace(":1:2:", ":{visit}:{position}:")
    doc = inspect.getdoc(idempotency_key) or ""
    lines = [f"Keys are built by `tether.runs.claim.idempotency_key`: `{shape}`.", ""]
    lines += [f"> {line}" if line else ">" for line in doc.splitlines()]
    lines += ["", "Every effect of this run, its key and what the case service saw of it:", ""]
    rows = []
    for case, run in record.cases.items():
        for entry in run.effects():
            _op, received, applied = run.calls.get(entry.idempotency_key, ("", 0, 0))
            rows.append(
                (
                    case,
                    entry.name,
                    f"`{entry.idempotency_key}`",
                    "yes" if rebuilt(run, entry) == entry.idempotency_key else "NO",
                    entry.status.value,
                    received,
                    applied,
                )
            )
    header = (
        "case",
        "effect",
        "key",
        "rebuilt by the code",
        "journal",
        "calls received",
        "applied",
    )
    return lines + table(header, rows)


def retention_expiration(record: DemoRecord) -> list[str]:
    done = record.retention
    if done is None:
        return ["No retention pass ran."]
    policies = ", ".join(f"`{w}`: {days} days" for w, days in done.run_policies.items())
    held = ", ".join(
        f"{case} (`{run.run.run_id}`, reason `{done.held_runs[run.run.run_id]}`)"
        for case, run in record.cases.items()
        if run.run.run_id in done.held_runs
    )
    lines = [
        f"Run retention policies: {policies or 'none'}; legal holds: {held or 'none'}. The "
        f"tenant's housekeeping pass (what an idle worker runs) ran with the clock at "
        f"{done.at:%Y-%m-%d %H:%M} UTC, past both the runs' and the facts' retention:",
        "",
    ]
    counts = [("runs", k, v) for k, v in done.report.runs.items()]
    counts += [("memory", k, v) for k, v in done.report.memory.items()]
    counts += [("threads", k, v) for k, v in done.report.threads.items()]
    counts.append(("working memory", "purged", done.report.working_purged))
    return [*lines, *table(("part", "count", "value"), counts), ""]


def rebuilt(run: CaseRun, entry: JournalEntry) -> str:
    return idempotency_key(
        run.run.tenant_id, run.run.run_id, entry.node, entry.visit, entry.position, entry.name
    )


def scenario_lines(found: list[Scenario], kinds: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    for scenario in found:
        if scenario.kind not in kinds:
            continue
        lines += [f"### {scenario.title}", ""]
        lines += [f"- {line}" for line in scenario.observed] or ["- NOT OBSERVED in this run."]
        tests = ", ".join(f"`{node.split('::')[-1]}`" for node in SCENARIO_TESTS[scenario.key])
        lines += ["", f"Covered by: {tests} (see Test results).", ""]
    return lines


def results_section(
    tests: PytestRun | None, mapping: dict[str, tuple[str, ...]] = SCENARIO_TESTS
) -> list[str]:
    if tests is None:
        lines = [
            "Not run: the demo was started with `--skip-tests`. The tests of each scenario:",
            "",
        ]
        return lines + table(
            ("scenario", "test"),
            [(key, f"`{node}`") for key, nodes in mapping.items() for node in nodes],
        )
    lines = [
        f"`{tests.command}`, on SQLite: {tests.count('passed')} passed, "
        f"{tests.count('failed')} failed, {tests.count('skipped')} skipped, "
        f"{tests.count('not run')} not run, in {tests.seconds:.1f} s.",
        "",
    ]
    if tests.problem:
        lines += [f"Problem: {tests.problem}", ""]
    rows = []
    for key, nodes in mapping.items():
        for node in nodes:
            found = tests.outcomes.get(node)
            if found is None:
                rows.append((key, f"`{node}`", "not run", "", ""))
                continue
            cases = f"{found.passed}/{found.passed + found.failed + found.skipped}"
            outcome = found.outcome + (f": {found.message}" if found.message else "")
            rows.append((key, f"`{node}`", outcome, cases, f"{found.seconds:.2f}"))
    return lines + table(("scenario", "test", "outcome", "cases passed", "seconds"), rows)


def operational_runbook(record: DemoRecord, report_dir: Path) -> list[str]:
    link = Path(os.path.relpath(ROOT / "docs" / "runbook.md", report_dir)).as_posix()
    environment = "\n".join(
        [
            f"export TETHER_URL={record.url} TETHER_TENANT={record.tenant}",
            "tether runs stuck --as olivia          # what needs an operator first",
            "pip install 'tether[server]' && tether serve --url \"$TETHER_URL\"   # the console",
        ]
    )
    return runbook.render(runbook_link=link, environment=environment)


def render(record: DemoRecord, tests: PytestRun | None, report_dir: Path) -> str:
    found = scenarios(record)
    bodies = {
        "State schema": state_schema(record),
        "Checkpoint schema": checkpoint_schema(record),
        "Interrupt schema": interrupt_schema(record),
        "Approval schema": approval_schema(record),
        "Memory policy": [*memory_policy(record), "", *scenario_lines(found, ("memory",))],
        "Idempotency strategy": idempotency_strategy(record),
        "Resume scenarios": scenario_lines(found, ("resume",)),
        "Failure scenarios": scenario_lines(found, ("failure",)),
        "Retention expiration": retention_expiration(record)
        + scenario_lines(found, ("retention",)),
        "Test results": results_section(tests),
        "Operational runbook": operational_runbook(record, report_dir),
    }
    lines = [
        f"# {TITLE}",
        "",
        "Generated by `python -m examples.case_review` (`make demo`) from the code (its "
        "pydantic models, its SQLite schema, its policy configuration, its command tree) and "
        f"from what this run stored in `{record.url}`. Do not edit: run the demo again.",
    ]
    for section in SECTIONS:
        body = "\n".join(bodies[section]).strip()
        lines += ["", f"## {section}", "", body]
    return "\n".join(lines) + "\n"
