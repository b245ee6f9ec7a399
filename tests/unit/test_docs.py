"""Docs that are generated from code must match the code."""

from __future__ import annotations

from scripts import gen_runs_doc


def test_runs_doc_schemas_are_current() -> None:
    text = gen_runs_doc.DOC.read_text()
    start = text.index(gen_runs_doc.BEGIN)
    stop = text.index(gen_runs_doc.END) + len(gen_runs_doc.END)
    assert text[start:stop] == gen_runs_doc.render(), (
        "docs/runs.md is out of date: run python -m scripts.gen_runs_doc"
    )
