"""docs/runbook.md is the session ``scripts/runbook_doc.py`` records today: regenerated
here (a fresh SQLite database, the example workflows, the real commands) and compared, so
a change to what a command prints or does fails until the page is regenerated."""

from __future__ import annotations

from scripts import runbook_doc


def test_the_runbook_page_is_what_the_commands_print_today() -> None:
    text = runbook_doc.render()

    assert text == runbook_doc.DOC.read_text(encoding="utf-8"), (
        "docs/runbook.md is out of date: run python -m scripts.runbook_doc"
    )
    for situation in (
        "## A stuck run",
        "## A failed run",
        "## An effect whose outcome is unknown",
        "## An approval that expired",
        "## A run to redo from an earlier point",
    ):
        assert situation in text
    assert text.count("error[") == 2, "a command of the session failed unexpectedly"
