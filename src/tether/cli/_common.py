"""What every command shares: options, opening the database, reporting errors.

The pattern every command follows:
- options are also environment variables (shown in ``--help``);
- reads take ``--json`` and then print only JSON on stdout;
- the database in use is named on stderr;
- a :class:`TetherError` prints ``error[code]: message`` and exits with its class's code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape

from tether import canonical
from tether.app import Tether
from tether.config import load_settings
from tether.errors import TetherError
from tether.principals import Principal

console = Console()
err_console = Console(stderr=True)

UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        envvar="TETHER_URL",
        help="Database URL: sqlite:///path.db (default sqlite:///./tether.db) or postgresql://…",
        show_default=False,
    ),
]
TenantOption = Annotated[
    str,
    typer.Option("--tenant", "-t", envvar="TETHER_TENANT", help="Tenant to act in."),
]
ActorOption = Annotated[
    str,
    typer.Option(
        "--as",
        envvar="TETHER_PRINCIPAL",
        help="Principal to act as; its roles in the tenant decide what is allowed.",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")
]


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    return value


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), indent=2, default=canonical.dumps) + "\n")


def say_database(display_url: str) -> None:
    err_console.print(
        f"[dim]database: {escape(display_url)}[/dim]", highlight=False, soft_wrap=True
    )


@contextmanager
def reporting(json_mode: bool = False) -> Iterator[None]:
    """Turn a :class:`TetherError` into a clear message and a stable exit code."""
    try:
        yield
    except TetherError as exc:
        if json_mode:
            print_json({"error": {"code": exc.code, "message": exc.message}})
        err_console.print(
            f"[red]error\\[{exc.code}][/red]: {escape(exc.message)}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(exc.exit_code) from None


@contextmanager
def open_app(url: str | None) -> Iterator[Tether]:
    """Open an existing, migrated database and name it on stderr."""
    settings = load_settings(url=url)
    say_database(settings.database.display)
    with Tether.open(settings) as app:
        yield app


def acting(app: Tether, tenant: str, actor: str) -> Principal:
    """Resolve the principal the command acts as (its roles come from the database)."""
    return app.tenants.principal(tenant, actor)
