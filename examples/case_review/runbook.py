"""The report's operational runbook, read from the ``tether`` command tree itself.

Every command of the groups an operator uses on runs, approvals, memory review and
retention is listed with its usage and its own help text, so a command added to one of
those groups appears here without anyone editing the report.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import typer.main

from tether.cli.main import COMMANDS
from tether.cli.main import app as cli_app

GROUPS = ("runs", "approvals", "memory", "retention", "gc", "housekeeping", "audit")
"""The command groups (or single commands) of the runbook, in the order shown."""

LEFT_OUT = ("--url", "--help")
"""Options every command takes and the runbook does not repeat (the database comes from
``TETHER_URL``)."""


@dataclass(frozen=True)
class CommandHelp:
    path: tuple[str, ...]
    usage: str
    summary: str
    options: tuple[str, ...]


def one_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def walk(command: Any, path: tuple[str, ...]) -> Iterator[CommandHelp]:
    """Every leaf command below ``command`` (itself, if it is one)."""
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            yield from walk(command.get_command(None, name), (*path, name))
        return
    arguments, required, optional = [], [], []
    for param in command.params:
        if param.param_type_name == "argument":
            arguments.append(param.name.upper())
            continue
        flag = max(param.opts, key=len)
        if flag in LEFT_OUT:
            continue
        if param.required:
            required.append(f"{flag} {param.name.upper()}")
        else:
            optional.append(flag)
    usage = " ".join(["tether", *path, *arguments, *required])
    yield CommandHelp(path, usage, one_paragraph(command.help), tuple(optional))


def commands(groups: tuple[str, ...] = GROUPS) -> list[CommandHelp]:
    root = typer.main.get_command(cli_app)
    found: list[CommandHelp] = []
    for group in groups:
        found.extend(walk(root.get_command(None, group), (group,)))
    return found


def render(*, runbook_link: str, environment: str) -> list[str]:
    """The runbook section's lines: where the procedures are, then each group's commands."""
    lines = [
        f"Step-by-step procedures for each situation are in [docs/runbook.md]({runbook_link}). "
        "The commands below are read from the `tether` command tree and its help texts "
        f"(`{', '.join(GROUPS)}`), as installed with this code.",
        "",
        "```sh",
        environment,
        "```",
    ]
    current = ""
    for command in commands():
        group = command.path[0]
        if group != current:
            current = group
            lines += ["", f"### `tether {group}`: {one_paragraph(COMMANDS[group][2])}", ""]
            lines += ["| command | what it does | options |", "|---|---|---|"]
        options = ", ".join(f"`{option}`" for option in command.options) or "-"
        lines.append(f"| `{command.usage}` | {command.summary.replace('|', '/')} | {options} |")
    return lines
