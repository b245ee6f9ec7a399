"""Docs that are generated from code must match the code."""

from __future__ import annotations

from pathlib import Path

from scripts import gen_runs_doc

from tether.permissions_doc import markdown_tables


def test_runs_doc_schemas_are_current() -> None:
    text = gen_runs_doc.DOC.read_text()
    start = text.index(gen_runs_doc.BEGIN)
    stop = text.index(gen_runs_doc.END) + len(gen_runs_doc.END)
    assert text[start:stop] == gen_runs_doc.render(), (
        "docs/runs.md is out of date: run python -m scripts.gen_runs_doc"
    )


def test_the_permissions_doc_shows_the_map() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "permissions.md").read_text()
    marker = "<!-- generated from tether.permissions_doc.markdown_tables()"
    generated = text[text.index("\n", text.index(marker)) + 1 :]
    assert generated == markdown_tables(), (
        "docs/permissions.md is out of date: replace everything after its marker line with "
        "tether.permissions_doc.markdown_tables()"
    )
