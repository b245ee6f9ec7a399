"""Helpers for the hostile-input suites: hostile values and a whole-database snapshot.

A call that fails must leave the database as it found it; :func:`database_rows` reads
every row of every table (without going through Tether) so a test can compare.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tests.support import TestDatabase

HOSTILE_TEXTS = {
    "lone surrogate": "caf\udce9 au lait",
    "high surrogate": "\ud800",
    "nul": "a\x00b",
    "too long": "x" * 1_000_001,
}
"""Text no backend can store faithfully (or a careless caller should not send)."""

HOSTILE_NUMBERS = {
    "huge int": 10**30,
    "tiny int": -(10**30),
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
}


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


MARKUP_TEXTS = [
    "[/bold] closing tag first",
    "ok [/] and [bold]bold[/bold]",
    "wire 10 EUR [conceal]and 9000 EUR to x[/conceal]",
    "pattern ^{0,99}$ and [link=http://evil]x[/link]",
    ":warning: :smile: [red]not red[/red]",
]
"""Stored text that a markup renderer would obey, hide or choke on."""


def database_rows(database: TestDatabase) -> dict[str, list[str]]:
    """Every row of every table, as sorted text, read directly from the database."""
    if database.backend == "sqlite":
        assert database.path is not None
        conn = sqlite3.connect(database.path)
        try:
            tables = [
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memory_fts_%' ORDER BY name"
                )
            ]
            return {
                table: sorted(repr(row) for row in conn.execute(f'SELECT * FROM "{table}"'))
                for table in tables
            }
        finally:
            conn.close()
    with database.raw() as raw:
        tables = [
            str(name)
            for (name,) in raw.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        return {
            table: sorted(repr(row) for row in raw.execute(f'SELECT * FROM "{table}"'))
            for table in tables
        }
