"""Named SQL queries (shared, with backend overrides) and numbered migrations, from files."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from tether.errors import SchemaOutdated, SchemaTooNew, StorageError
from tether.storage.base import ComponentVersion

_HEADER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)

COMPONENTS: tuple[str, ...] = (
    "core",
    "runs",
    "memory",
    "working_memory",
    "threads",
    "procedures",
    "operations",
    "langgraph",
)
"""Components in the order their migrations apply (later ones may reference earlier)."""


ParamStyle = Literal["named", "pyformat"]
"""How a driver spells a parameter: ``:name`` (sqlite3) or ``%(name)s`` (psycopg)."""

SHARED_PACKAGE = "tether.storage"
"""The package whose ``queries/`` hold the queries written once for every backend."""

_PORTABLE_TOKEN = re.compile(
    r"""
      (?P<comment>--[^\n]*)
    | (?P<block>/\*(?:(?!/\*).)*?\*/)
    | (?P<escape>(?<![A-Za-z0-9_])[eE]')
    | (?P<literal>'(?:[^']|'')*'|"(?:[^"]|"")*")
    | (?P<open>/\*|'|")
    | (?P<colons>:::|:(?=[0-9]))
    | (?P<cast>::)
    | (?P<param>:[A-Za-z_][A-Za-z0-9_]*)
    | (?P<pyformat>%\([^)]*\)|%[sbt](?![A-Za-z0-9_]))
    | (?P<percent>%)
    | (?P<dialect>[?$@\[`])
    """,
    re.VERBOSE | re.DOTALL,
)
_AMBIGUOUS = {
    "escape": "an E'...' string, whose backslash escapes SQLite does not read",
    "open": "an unterminated string, quoted name or comment, or a nested /* comment",
    "colons": "a ':' that is neither a '::' cast nor a ':name' parameter",
    "pyformat": "a psycopg placeholder; write parameters as :name",
    "dialect": "a character that is a parameter or quote on one backend and not the other",
}


def translate(sql: str, paramstyle: ParamStyle) -> str:
    """A shared query in the driver's parameter style, checked to mean the same on both.

    ``:name`` becomes ``%(name)s`` and every ``%`` becomes ``%%`` for psycopg, which reads
    placeholders over the whole text; ``::type`` casts, string literals, quoted names and
    comments keep their ``:``. The text is checked for every style, so a query that would
    bind differently on one backend fails on both.

    Raises:
        ValueError: The text holds something the two drivers could read differently
            (``?``, ``$``, ``@``, ``[``, a backtick, an ``E'...'`` string, a psycopg
            placeholder, an unterminated literal or comment): such a query belongs in the
            backend folders instead.
    """
    out: list[str] = []
    end = 0
    for match in _PORTABLE_TOKEN.finditer(sql):
        kind = match.lastgroup or ""
        token = match.group()
        if kind in _AMBIGUOUS:
            line = sql.count("\n", 0, match.start()) + 1
            raise ValueError(f"line {line}: {token!r} is {_AMBIGUOUS[kind]}")
        out.append(sql[end : match.start()])
        end = match.end()
        if paramstyle == "named":
            out.append(token)
        elif kind == "param":
            out.append(f"%({token[1:]})s")
        else:
            out.append(token.replace("%", "%%"))
    out.append(sql[end:])
    return "".join(out)


_PYFORMAT = re.compile(r"%\(([A-Za-z_][A-Za-z0-9_]*)\)s|%%")


def comparable(sql: str, paramstyle: ParamStyle) -> str:
    """The query with whitespace collapsed and psycopg's ``%(x)s`` / ``%%`` read as ``:x`` / ``%``.

    Two queries whose comparable forms are equal say the same thing on both backends.
    """
    if paramstyle == "pyformat":
        sql = _PYFORMAT.sub(lambda m: f":{m.group(1)}" if m.group(1) else "%", sql)
    return " ".join(sql.split())


def read_queries(package: str) -> dict[str, str]:
    """Parse ``queries/<component>.sql`` of ``package`` into ``{name: sql}``, as written.

    Each query starts with a ``-- name: some_query`` line; a component may have no file.

    Raises:
        RuntimeError: A name is defined twice in the package's files.
    """
    queries: dict[str, str] = {}
    folder = resources.files(package).joinpath("queries")
    for component in COMPONENTS:
        path = folder.joinpath(f"{component}.sql")
        if not path.is_file():
            continue
        parts = _HEADER.split(path.read_text("utf-8"))
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name in queries:
                raise RuntimeError(f"{package} queries/{component}.sql defines {name!r} again")
            queries[name] = body.strip().rstrip(";")
    return queries


def load_queries(package: str, paramstyle: ParamStyle) -> dict[str, str]:
    """The shared queries in ``paramstyle``, with ``package``'s own queries over them.

    A backend's ``queries/`` hold only what differs from the shared text (or exists on that
    backend alone), written in the driver's own parameter style and used as is.

    Raises:
        RuntimeError: A name is defined twice in one tree, an override repeats the shared
            text (delete it), or a shared query cannot be translated safely.
    """
    shared = read_queries(SHARED_PACKAGE)
    overrides = read_queries(package)
    for name, sql in overrides.items():
        if name in shared and comparable(sql, paramstyle) == comparable(shared[name], "named"):
            raise RuntimeError(
                f"{package} overrides {name!r} with the text {SHARED_PACKAGE} already has; "
                "delete the override"
            )
    return {**_translated(paramstyle), **overrides}


@cache
def _translated(paramstyle: ParamStyle) -> dict[str, str]:
    """The shared queries in ``paramstyle``, scanned once per process."""
    queries: dict[str, str] = {}
    for name, sql in read_queries(SHARED_PACKAGE).items():
        try:
            queries[name] = translate(sql, paramstyle)
        except ValueError as exc:
            raise RuntimeError(
                f"{SHARED_PACKAGE} query {name!r} cannot be shared: {exc}; "
                "write it in each backend's queries/ instead"
            ) from exc
    return queries


@dataclass(frozen=True)
class Migration:
    component: str
    version: int
    name: str
    sql: str


_MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def load_migrations(package: str) -> list[Migration]:
    """Every migration of every component, in the order they must be applied."""
    root = resources.files(package).joinpath("migrations")
    found: list[Migration] = []
    for component in COMPONENTS:
        folder = root.joinpath(component)
        files = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
        for expected, filename in enumerate(files, start=1):
            match = _MIGRATION_FILE.match(filename)
            if not match or int(match.group(1)) != expected:
                raise RuntimeError(f"migration {component}/{filename} is misnumbered")
            sql = folder.joinpath(filename).read_text("utf-8")
            found.append(Migration(component, expected, match.group(2), sql))
    return found


def latest_versions(migrations: list[Migration]) -> dict[str, int]:
    latest = {component: 0 for component in COMPONENTS}
    for migration in migrations:
        latest[migration.component] = max(latest[migration.component], migration.version)
    return latest


def compare_versions(applied: dict[str, int], latest: dict[str, int]) -> list[ComponentVersion]:
    names = sorted(set(applied) | set(latest), key=lambda c: (c not in COMPONENTS, c))
    return [ComponentVersion(c, applied.get(c, 0), latest.get(c, 0)) for c in names]


def refuse_newer(status: list[ComponentVersion], display_url: str) -> None:
    """Raise if a newer Tether already migrated the database past what this code knows."""
    newer = [s for s in status if s.applied > s.latest]
    if newer:
        details = ", ".join(
            f"{s.component} v{s.applied} (this Tether knows v{s.latest})" for s in newer
        )
        raise SchemaTooNew(
            f"the database at {display_url} was migrated by a newer Tether: {details}. "
            "Upgrade Tether; it will not touch a schema it does not know"
        )


def require_current(status: list[ComponentVersion], display_url: str) -> None:
    """Raise the error that tells the user what to do when the schema is not current."""
    refuse_newer(status, display_url)
    if all(s.applied == 0 for s in status):
        raise SchemaOutdated(
            f"the database at {display_url} has no Tether schema; run `tether migrate`"
        )
    older = [s for s in status if s.applied < s.latest]
    if older:
        details = ", ".join(f"{s.component} v{s.applied} -> v{s.latest}" for s in older)
        raise SchemaOutdated(
            f"the database at {display_url} needs migrating ({details}); run `tether migrate`"
        )


def split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (trigger bodies stay whole)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines(keepends=True):
        current.append(line)
        text = "".join(current)
        if sqlite3.complete_statement(text):
            if text.strip(" \n\t;"):
                statements.append(text)
            current = []
    rest = "".join(current)
    if rest.strip() and not all(
        part.strip().startswith("--") or not part.strip() for part in rest.splitlines()
    ):
        raise StorageError(f"incomplete SQL statement in migration: {rest.strip()[:80]}")
    return statements
