"""The ``tether`` command's documentation and start-up: every command has help text and a
section in docs/cli.md, every read takes ``--json``, and ``tether --help`` imports
neither the library nor the database drivers."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

import tether
from tether.cli.main import COMMANDS
from tether.cli.main import app as cli_app

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
READS = {"ls", "show", "timeline", "handoff", "inbox", "recall", "history", "pending"}
READS |= {"endpoints", "status", "verify", "check"}
HEAVY = ("fastapi", "starlette", "uvicorn", "jinja2", "tether.server")
HEAVY += ("mcp", "langgraph", "langchain_core", "tether.integrations")
HEAVY += ("numpy", "sentence_transformers", "torch", "psycopg", "redis")
"""The server, the integrations, the embedding model and the drivers: imported only by the
command that uses them, when it runs."""
NOT_LOADED_BY_HELP = ("tether.app", "tether.audit", "tether.storage", "tether.procedures")
NOT_LOADED_BY_HELP += ("pydantic_settings", *HEAVY)


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group below ``command`` (the lazily loaded ones loaded)."""
    for name in command.list_commands(None) if hasattr(command, "list_commands") else []:
        sub = command.get_command(None, name)
        yield (*path, name), sub
        yield from commands(sub, (*path, name))


ALL = list(commands(typer.main.get_command(cli_app)))


def one_line(text: str | None) -> str:
    return " ".join((text or "").split("\n\n")[0].split())


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(path) for path, _ in ALL])
def test_every_command_has_help_and_a_section_in_docs_cli_md(
    path: tuple[str, ...], command: Any
) -> None:
    name = " ".join(path)
    assert one_line(command.help), f"`tether {name}` has no help text"
    headings = re.findall(r"^#+ `(tether [^`]+)`$", DOC.read_text(encoding="utf-8"), re.M)
    assert f"tether {name}" in headings, f"docs/cli.md has no section for `tether {name}`"


def test_the_listing_of_tether_help_is_each_commands_own_summary() -> None:
    root = typer.main.get_command(cli_app)
    for name, (_module, _attribute, summary) in COMMANDS.items():
        assert one_line(summary) == one_line(root.get_command(None, name).help), name


def test_every_read_takes_json() -> None:
    reads = [
        path for path, command in ALL if path[-1] in READS and not hasattr(command, "commands")
    ]
    assert len(reads) >= 20
    for path in reads:
        options = {param.name for param in dict(ALL)[path].params}
        assert options & {"json_output", "json_mode"}, f"`tether {' '.join(path)}` lacks --json"


def help_of(*command: str, watched: tuple[str, ...]) -> tuple[str, list[str]]:
    """``tether COMMAND --help`` in a fresh interpreter: what it printed, and which of the
    ``watched`` modules it had imported by then."""
    source = str(Path(tether.__file__).resolve().parents[1])
    code = (
        f"import sys; sys.path.insert(0, {source!r})\n"
        f"sys.argv = ['tether', *{list(command)!r}, '--help']\n"
        "from tether.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', *sorted(n for n in {watched!r} if n in sys.modules))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return shown, shown.splitlines()[-1].split()[1:]


def test_tether_help_imports_neither_the_library_nor_the_drivers() -> None:
    shown, loaded = help_of(watched=NOT_LOADED_BY_HELP)

    for name in COMMANDS:
        assert name in shown
    assert loaded == []


@pytest.mark.parametrize("command", ["serve", "mcp", "worker", "memory"])
def test_the_server_and_integration_commands_help_imports_nothing_heavy(command: str) -> None:
    shown, loaded = help_of(command, watched=HEAVY)

    assert "Usage:" in shown
    assert loaded == [], f"`tether {command} --help` imported {loaded}"
