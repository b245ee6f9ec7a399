"""The ``tether`` command: a thin layer over the Python API.

Each command's module is imported only when that command runs (or shows its own help):
``tether --help`` lists the commands from :data:`COMMANDS` and loads neither the
library nor the database drivers, so it answers at once. A test checks every summary
here against the loaded command's help.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from tether import __version__

#: command name -> (module, attribute, one-line summary shown by ``tether --help``).
#: The attribute is a ``typer.Typer`` (a group) or a function (a single command).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "migrate": (
        "tether.cli.admin",
        "migrate",
        "Create the database if needed and apply every pending migration.",
    ),
    "status": (
        "tether.cli.admin",
        "status",
        "Show the backend and the schema version of each component (exit 7 if not current).",
    ),
    "demo": (
        "tether.cli.demo",
        "demo",
        "Run the demo on a fresh SQLite database in --dir (replacing an earlier demo's).",
    ),
    "tenants": ("tether.cli.tenants", "tenants_app", "Create and list tenants."),
    "principals": (
        "tether.cli.tenants",
        "principals_app",
        "Grant roles to principals inside a tenant.",
    ),
    "platform": (
        "tether.cli.tenants",
        "platform_app",
        "Platform administrators: the only principals that write global memory.",
    ),
    "api-keys": (
        "tether.cli.apikeys",
        "api_keys_app",
        "API keys of the HTTP API: each acts as one principal of one tenant, with roles.",
    ),
    "audit": ("tether.cli.audit", "audit_app", "Read and verify the audit trail."),
    "runs": ("tether.cli.runbook", "runs_app", "Start, inspect and operate runs."),
    "approvals": (
        "tether.cli.runs",
        "approvals_app",
        "The approvals inbox: list, show, approve, reject.",
    ),
    "memory": (
        "tether.cli.memory",
        "memory_app",
        "Governed memory: the model proposes, the policy decides.",
    ),
    "mcp": (
        "tether.cli.mcp",
        "mcp",
        "Serve governed memory to MCP clients (stdio, or streamable HTTP with --http).",
    ),
    "procedures": (
        "tether.cli.procedures",
        "procedures_app",
        "Skills and policies as versioned YAML files, enforced before effects.",
    ),
    "threads": (
        "tether.cli.threads",
        "threads_app",
        "Conversation threads: turns stored once, in order, with summaries beside them.",
    ),
    "context": (
        "tether.cli.threads",
        "context_app",
        "Working contexts built from a thread within a token budget.",
    ),
    "worker": (
        "tether.cli.worker",
        "worker",
        "Execute runnable runs of every tenant until stopped (SIGTERM/SIGINT finish the node).",
    ),
    "serve": (
        "tether.cli.serve",
        "serve",
        "Serve the HTTP API, the operator console (/console), /healthz, /readyz and /metrics "
        "until stopped (Ctrl-C).",
    ),
    "gc": (
        "tether.cli.retention",
        "gc",
        "Compact finished runs past their workflow's retention period (see `retention set`).",
    ),
    "retention": (
        "tether.cli.retention",
        "retention_app",
        "Run retention: policies per workflow and legal holds on runs.",
    ),
    "housekeeping": (
        "tether.cli.housekeeping",
        "housekeeping_app",
        "Retention passes (memory, threads, working memory, runs); workers run them on a schedule.",
    ),
    "webhooks": (
        "tether.cli.webhooks",
        "webhooks_app",
        "Signed webhooks: allowlist, endpoints, delivery log, retries.",
    ),
}


def load_command(name: str) -> Any:
    """The click command ``tether NAME``, importing its module now."""
    module, attribute, _summary = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer(add_completion=False)
    holder.callback()(_holder)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


def _holder() -> None:
    """Makes the holder of a loaded command a group, so it keeps its name and options."""


class LazyGroup(TyperGroup):
    """The root group: commands load on first use; the listing shows their summaries."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if self._listing:
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name][2])
        if cmd_name not in self.commands:
            self.commands[cmd_name] = load_command(cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="tether",
    cls=LazyGroup,
    help=(
        "Durable runs and governed memory for long-running AI agents.\n\n"
        "Every command names the database it uses (TETHER_URL, default "
        "sqlite:///./tether.db) on stderr. Exit codes: 0 ok, 1 unexpected failure, 2 usage, "
        "3 invalid input or settings, 4 not found, 5 conflict, 6 permission denied, "
        "7 database unavailable, missing or at the wrong schema, 8 integrity violation."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tether {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Durable runs and governed memory for long-running AI agents."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
