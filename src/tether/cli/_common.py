"""What every command shares: options, opening the database, reporting errors.

The pattern every command follows:
- options are also environment variables (shown in ``--help``);
- reads take ``--json`` and then print only JSON on stdout;
- the database in use is named on stderr;
- a :class:`TetherError` prints ``error[code]: message`` and exits with its class's code;
  a pydantic validation error is ``invalid_input`` (exit 3), anything else ``unexpected``
  (exit 1), never a traceback; every message passes :func:`tether.redaction.redact` with
  the secrets of the settings in use;
- stored and user-supplied text is printed as it is: the consoles never read markup or
  emoji codes, and control characters are shown escaped (``\\x1b``), not sent to the
  terminal.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import click
import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from tether import canonical
from tether.app import Tether
from tether.config import load_settings
from tether.errors import InvalidInput, TetherError
from tether.principals import Principal
from tether.redaction import redact, url_secrets
from tether.validation import validation_message

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SECRET_VARIABLES = ("TETHER_SECRET_KEY", "TETHER_SUMMARIZER_KEY", "TETHER_API_KEY")
_URL_VARIABLES = ("TETHER_URL", "TETHER_REDIS_URL")
_WIDEST_TABLE = 100_000
_OTHER_COLUMN = 8


def visible(text: str) -> str:
    """``text`` with control characters (terminal escapes among them) and lone surrogates
    shown as escapes (``\\x1b``, ``\\udcff``) instead of sent to the terminal."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class PlainConsole(Console):
    """A console that prints text as given: no markup, no emoji codes, no highlighting.

    Every string it renders (printed or in a table cell) goes through here, so a memory
    holding ``[/bold]`` or ``[conceal]`` is shown, never obeyed.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, soft_wrap=True, **options)

    def render_str(self, text: str, **options: Any) -> Text:
        options.update(markup=False, emoji=False)
        return super().render_str(visible(text), **options)


console = PlainConsole()
err_console = PlainConsole(stderr=True)

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
WorkflowsOption = Annotated[
    str,
    typer.Option(
        envvar="TETHER_WORKFLOWS",
        help="module:attribute of the WorkflowRegistry (or Workflow) to run, e.g. "
        "examples.case_review.workflow:registry",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")
]


def id_column(header: str) -> Column:
    """A table column for ids: never wrapped or cut, so the id can be copied whole."""
    return Column(header, no_wrap=True)


def print_table(table: Table) -> None:
    """Print ``table`` at the terminal's width, or wider when its id columns need more:
    long lines, never a cut id. The other columns wrap, keeping a few characters each."""
    natural = console.measure(table, options=console.options.update_width(_WIDEST_TABLE))
    ids = [column for column in table.columns if column.no_wrap]
    for_ids = sum(max(map(len, map(str, [column.header, *column.cells]))) for column in ids)
    needed = for_ids + _OTHER_COLUMN * (len(table.columns) - len(ids)) + 3 * len(table.columns)
    width = min(natural.maximum, needed)
    if width <= console.width:
        console.print(table)
    else:  # a console's print never goes wider than the console
        PlainConsole(width=width).print(table)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    return value


def print_json(value: Any) -> None:
    """JSON on stdout, ASCII only: nothing in it can act on a terminal."""
    sys.stdout.write(json.dumps(to_jsonable(value), indent=2, default=canonical.dumps) + "\n")


def write_text(text: str) -> None:
    """Stored text (a Markdown document) on stdout, with control characters escaped."""
    sys.stdout.write(visible(text))


def read_stdin() -> str:
    """All of stdin as text; invalid UTF-8 is ``invalid_input``, not a crash."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"stdin is not valid UTF-8 (byte {exc.start}); send UTF-8 text"
        ) from None


def say_database(display_url: str) -> None:
    err_console.print(f"database: {display_url}")


def current_secrets() -> list[str]:
    """The secrets of the settings this command uses (``--url`` and ``TETHER_*``)."""
    found: list[str] = []
    context = click.get_current_context(silent=True)
    given = context.params.get("url") if context is not None else None
    for url in (given, *(os.environ.get(name) for name in _URL_VARIABLES)):
        found += url_secrets(url) if isinstance(url, str) else []
    found += [os.environ[name] for name in _SECRET_VARIABLES if os.environ.get(name)]
    return found


def report(code: str, message: str, exit_code: int, json_mode: bool) -> typer.Exit:
    message = redact(message, current_secrets())
    if json_mode:
        print_json({"error": {"code": code, "message": message}})
    err_console.print(f"error[{code}]: {message}")
    return typer.Exit(exit_code)


@contextmanager
def reporting(json_mode: bool = False) -> Iterator[None]:
    """Turn any failure into a clear, redacted message and a stable exit code."""
    try:
        yield
    except TetherError as exc:
        raise report(exc.code, exc.message, exc.exit_code, json_mode) from None
    except ValidationError as exc:
        raise report(
            InvalidInput.code, validation_message(exc), InvalidInput.exit_code, json_mode
        ) from None
    except (typer.Exit, click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
        raise
    except Exception as exc:
        raise report("unexpected", f"{type(exc).__name__}: {exc}", 1, json_mode) from None


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
