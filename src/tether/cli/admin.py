"""Database commands: ``migrate`` and ``status``."""

from __future__ import annotations

import typer
from rich.table import Table

from tether.app import Tether
from tether.cli._common import JsonOption, UrlOption, console, print_json, reporting, say_database
from tether.config import load_settings
from tether.storage import open_storage


def migrate(url: UrlOption = None) -> None:
    """Create the database if needed and apply every pending migration.

    The only command (with `demo`) that creates a database. Safe to run again: it applies
    only what is missing, and refuses a database migrated by a newer Tether.
    """
    with reporting():
        settings = load_settings(url=url)
        say_database(settings.database.display)
        app, applied = Tether.migrate(settings)
        with app:
            status = app.storage.schema_status()
        if not applied:
            console.print("Already up to date.")
        for migration in applied:
            console.print(f"applied {migration.component} {migration.version:04d}_{migration.name}")
        console.print(
            "schema: " + ", ".join(f"{s.component} v{s.applied}" for s in status),
            highlight=False,
        )


def status(url: UrlOption = None, json_output: JsonOption = False) -> None:
    """Show the backend and the schema version of each component (exit 7 if not current)."""
    with reporting(json_output):
        settings = load_settings(url=url)
        say_database(settings.database.display)
        storage = open_storage(settings)
        try:
            rows = storage.schema_status()
            backend = storage.backend
        finally:
            storage.close()
        current = all(row.applied == row.latest for row in rows)
        if json_output:
            print_json(
                {
                    "backend": backend,
                    "url": settings.database.display,
                    "current": current,
                    "components": [row.__dict__ for row in rows],
                }
            )
        else:
            table = Table("component", "applied", "latest")
            for row in rows:
                table.add_row(row.component, str(row.applied), str(row.latest))
            console.print(f"backend: {backend}")
            console.print(table)
            console.print("schema is current" if current else "run `tether migrate`")
        if not current:
            raise typer.Exit(7)
