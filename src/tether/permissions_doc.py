"""The permission map as the Markdown tables of ``docs/permissions.md`` (a test keeps the
page equal to :func:`markdown_tables`)."""

from __future__ import annotations

from tether.permissions import (
    NO_PRINCIPAL,
    OPERATIONS,
    PLATFORM_PERMISSIONS,
    ROLE_PERMISSIONS,
    Permission,
)
from tether.permissions_cli import CLI_COMMANDS, command_permission
from tether.principals import Role


def markdown_tables() -> str:
    """The map as Markdown tables: each permission by role, each operation's permission,
    each CLI command's operation and permission."""
    roles = [Role.VIEWER, Role.AGENT, Role.APPROVER, Role.OPERATOR, Role.ADMIN]
    lines = ["| permission | " + " | ".join(r.value for r in roles) + " | platform admin |"]
    lines.append("|---" * (len(roles) + 2) + "|")
    for permission in Permission:
        if permission in NO_PRINCIPAL:
            continue
        cells = ["yes" if permission in ROLE_PERMISSIONS[r] else "" for r in roles]
        cells.append("yes" if permission in PLATFORM_PERMISSIONS[Role.ADMIN] else "")
        lines.append(f"| `{permission.value}` | " + " | ".join(cells) + " |")
    lines += ["", "| operation | permission |", "|---|---|"]
    lines += [f"| `app.{op}` | `{perm.value}` |" for op, perm in OPERATIONS.items()]
    lines += ["", "| command | operation | permission |", "|---|---|---|"]
    for command, operation in CLI_COMMANDS.items():
        shown = "—" if operation == "maintenance" else f"`app.{operation}`"
        lines.append(f"| `tether {command}` | {shown} | `{command_permission(command).value}` |")
    return "\n".join(lines) + "\n"
