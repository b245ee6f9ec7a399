"""Regenerate the schema section of docs/runs.md from the models.

python -m scripts.gen_runs_doc          # rewrite the section (from the repository root)
python -m scripts.gen_runs_doc --check  # exit 1 if the docs are out of date (a test runs this)
"""

from __future__ import annotations

import sys
from pathlib import Path

from examples.case_review.workflow import CaseReview
from pydantic import BaseModel

from tether.runs.models import (
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
    JournalEntry,
    Run,
    RunEvent,
    Wait,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "runs.md"
BEGIN, END = "<!-- schemas:begin -->", "<!-- schemas:end -->"

SECTIONS: list[tuple[str, type[BaseModel], str]] = [
    ("Run", Run, "The run row. The state itself lives in checkpoints."),
    ("State (the case review's)", CaseReview, "Each workflow declares its own pydantic state."),
    (
        "Checkpoint",
        Checkpoint,
        "`full`: the whole state as canonical JSON; "
        "`delta`: operations since the previous checkpoint.",
    ),
    ("JournalEntry", JournalEntry, "One effect, step, interrupt or approval of a node visit."),
    ("Wait (interrupt or approval request)", Wait, "A durable question the run waits on."),
    ("ApprovalRequest", ApprovalRequest, "The `request` of an approval wait."),
    ("ApprovalDecision", ApprovalDecision, "What `ctx.approval` returns once decided."),
    ("RunEvent", RunEvent, "One line of the run's event log."),
]


def render() -> str:
    parts = [BEGIN, ""]
    for title, model, blurb in SECTIONS:
        parts += [f"### {title}", "", blurb, "", *model_table(model), ""]
    parts.append(END)
    return "\n".join(parts)


def model_table(model: type[BaseModel]) -> list[str]:
    """A Markdown table of the model's fields (name, type, description), from its JSON
    schema."""
    schema = model.model_json_schema()
    rows = ["| field | type | notes |", "|---|---|---|"]
    defs = schema.get("$defs", {})
    for name, prop in schema.get("properties", {}).items():
        rows.append(f"| `{name}` | {type_of(prop, defs)} | {prop.get('description', '')} |")
    return rows


def type_of(prop: dict[str, object], defs: dict[str, dict[str, object]]) -> str:
    if "$ref" in prop:
        ref = str(prop["$ref"]).rsplit("/", 1)[-1]
        target = defs.get(ref, {})
        if "enum" in target:
            return " \\| ".join(f"`{v}`" for v in target["enum"])  # type: ignore[union-attr]
        return ref
    if "anyOf" in prop:
        return " or ".join(type_of(p, defs) for p in prop["anyOf"])  # type: ignore[union-attr]
    kind = prop.get("type", "any")
    fmt = prop.get("format")
    if kind == "array":
        return f"list of {type_of(prop.get('items', {}), defs)}"  # type: ignore[arg-type]
    if kind == "object":
        return "object"
    return f"{kind} ({fmt})" if fmt else str(kind)


def main() -> int:
    text = DOC.read_text()
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    updated = text[:start] + render() + text[stop:]
    if "--check" in sys.argv:
        if updated != text:
            print("docs/runs.md is out of date: run python -m scripts.gen_runs_doc")
            return 1
        return 0
    DOC.write_text(updated)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
