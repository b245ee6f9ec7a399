"""Procedure files: validation that names file and field, content-hash versions, policy
matching on declared fields, and contradiction warnings. No database."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.errors import ProcedureInvalid
from tether.procedures import EffectFacts, Outcome, Procedures, evaluate, load_dir

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "procedures"


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


FORBID = """
kind: policy
name: never-delete-production-data
description: no deletes in production
severity: hard
action: forbid
match:
  effects: ["db.delete*"]
  conditions: [{field: env, op: eq, value: production}]
exceptions:
  - conditions: [{field: table, op: eq, value: scratch}]
"""

WARN_SAME = """
kind: policy
name: deletes-are-fine
description: just note deletes in production
severity: hard
action: warn
match:
  effects: ["db.delete*"]
  conditions: [{field: env, op: eq, value: production}]
"""


def decide(directory: Path, name: str, request: object, **facts: object) -> Outcome:
    found = load_dir(directory)
    return evaluate(found.version, found.policies, EffectFacts(name, request, **facts)).outcome  # type: ignore[arg-type]


def test_the_examples_load_and_do_not_contradict_each_other() -> None:
    found = load_dir(EXAMPLES)
    assert {p.name for p in found.policies} >= {
        "never-delete-production-data",
        "no-destructive-command-without-approval",
    }
    assert [s.name for s in found.skills] == ["deploy-staging-first"]
    assert Procedures.check_directory(EXAMPLES).warnings == []


def test_the_version_is_a_hash_of_what_the_files_say_not_how(tmp_path: Path) -> None:
    one = write(tmp_path / "one", {"a.yaml": FORBID})
    reformatted = FORBID.replace("severity: hard", "severity:   'hard'  # strict")
    two = write(tmp_path / "two", {"renamed.yml": reformatted})
    assert load_dir(one).version == load_dir(two).version
    three = write(tmp_path / "three", {"a.yaml": FORBID.replace("production", "prod")})
    assert load_dir(three).version != load_dir(one).version


@pytest.mark.parametrize(
    ("text", "field", "detail"),
    [
        (FORBID.replace("severity: hard", "severity: medium"), "field severity", "'hard'"),
        (FORBID.replace("op: eq", "op: equals"), "field match.conditions.0.op", "'eq'"),
        (FORBID.replace('effects: ["db.delete*"]', "effects: []"), "field match.effects", ""),
        (
            FORBID.replace("value: production", "value: [a, b]").replace("op: eq", "op: gt"),
            "field match.conditions.0",
            "needs a number",
        ),
        (FORBID + "\nunknown_key: 1\n", "field unknown_key", "Extra inputs"),
        (FORBID.replace("kind: policy", "kind: rule"), "field kind", "'skill' or 'policy'"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, text: str, field: str, detail: str
) -> None:
    directory = write(tmp_path / "p", {"good.yaml": WARN_SAME, "bad.yaml": text})
    with pytest.raises(ProcedureInvalid) as caught:
        load_dir(directory)
    assert f"bad.yaml: {field}" in caught.value.message
    assert detail in caught.value.message
    assert "good.yaml" not in caught.value.message


def test_invalid_yaml_names_the_file_and_the_line(tmp_path: Path) -> None:
    directory = write(tmp_path / "p", {"broken.yaml": "kind: policy\nname: [unclosed\n"})
    with pytest.raises(ProcedureInvalid, match=r"broken\.yaml: not valid YAML at line"):
        load_dir(directory)


def test_two_documents_with_one_name_are_refused(tmp_path: Path) -> None:
    directory = write(tmp_path / "p", {"a.yaml": FORBID, "b.yaml": FORBID})
    with pytest.raises(ProcedureInvalid, match=r"b\.yaml: field name: .* also defined in a\.yaml"):
        load_dir(directory)


def test_policies_match_declared_fields_with_explicit_exceptions(tmp_path: Path) -> None:
    directory = write(tmp_path / "p", {"a.yaml": FORBID})
    production = {"env": "production", "table": "orders"}
    assert decide(directory, "db.delete_rows", production) is Outcome.FORBID
    assert decide(directory, "db.delete_rows", {**production, "table": "scratch"}) is Outcome.ALLOW
    assert decide(directory, "db.delete_rows", {"env": "staging"}) is Outcome.ALLOW
    assert decide(directory, "db.insert", production) is Outcome.ALLOW
    # No keyword matching: the word in free text does not trigger anything.
    assert decide(directory, "notes.write", {"text": "db.delete in production"}) is Outcome.ALLOW


def test_condition_operators(tmp_path: Path) -> None:
    policy = """
kind: policy
name: p
description: d
severity: hard
action: require_approval
match:
  effects: ["*"]
  labels: [{label}]
  conditions: [{{field: {field}, op: {op}, value: {value}}}]
"""
    cases = [
        ("amount", "gt", "100", {"amount": 101}, True),
        ("amount", "gt", "100", {"amount": 100}, False),
        ("amount", "lt", "100", {"amount": "5"}, False),
        ("to.country", "in", "[FR, DE]", {"to": {"country": "FR"}}, True),
        ("to.country", "not_in", "[FR, DE]", {}, True),
        ("items.1.sku", "matches", "'X-[0-9]+'", {"items": [{}, {"sku": "X-12"}]}, True),
        ("items.1.sku", "matches", "'X-[0-9]+'", {"items": [{}, {"sku": "X-12b"}]}, False),
        ("force", "exists", "true", {"force": False}, True),
        ("force", "exists", "false", {"force": False}, False),
        ("env", "ne", "prod", {}, True),
    ]
    for index, (field, op, value, request, hit) in enumerate(cases):
        text = policy.format(label="risky", field=field, op=op, value=value)
        directory = write(tmp_path / f"p{index}", {"p.yaml": text})
        labelled = decide(directory, "x", request, labels=frozenset({"risky"}))
        assert (labelled is Outcome.REQUIRE_APPROVAL) is hit, (field, op, value, request)
        assert decide(directory, "x", request) is Outcome.ALLOW


def test_check_warns_about_contradicting_policies_and_explains_the_pair(tmp_path: Path) -> None:
    directory = write(tmp_path / "p", {"forbid.yaml": FORBID, "warn.yaml": WARN_SAME})
    report = Procedures.check_directory(directory)
    assert report.ok
    assert len(report.warnings) == 1
    warning = report.warnings[0]
    assert "'never-delete-production-data' (forbid.yaml)" in warning
    assert "'deletes-are-fine' (warn.yaml)" in warning
    assert "have the same match" in warning
    assert "'deletes-are-fine' only warns while 'never-delete-production-data' forbids" in warning
    assert "'never-delete-production-data' wins (forbid)" in warning


def test_check_warns_about_overlapping_matches_but_not_disjoint_ones(tmp_path: Path) -> None:
    overlapping = WARN_SAME.replace('["db.delete*"]', '["db.delete_rows"]').replace(
        "conditions: [{field: env, op: eq, value: production}]",
        "conditions: [{field: env, op: in, value: [production, staging]}]",
    )
    disjoint = WARN_SAME.replace("value: production", "value: staging")
    report = Procedures.check_directory(
        write(tmp_path / "a", {"forbid.yaml": FORBID, "warn.yaml": overlapping})
    )
    assert len(report.warnings) == 1
    assert "can match the same effect" in report.warnings[0]
    report = Procedures.check_directory(
        write(tmp_path / "b", {"forbid.yaml": FORBID, "warn.yaml": disjoint})
    )
    assert report.warnings == []


def test_check_reports_every_error_instead_of_raising(tmp_path: Path) -> None:
    directory = write(tmp_path / "p", {"a.yaml": "kind: skill\nname: s\ndescription: d\n"})
    report = Procedures.check_directory(directory)
    assert not report.ok
    assert report.errors == ["a.yaml: field (document): a skill needs steps or instructions"]
