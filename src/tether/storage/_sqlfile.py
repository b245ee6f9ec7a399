"""Named SQL queries and numbered migrations, read from a backend package's files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from tether.errors import SchemaOutdated, SchemaTooNew
from tether.storage.base import ComponentVersion

_HEADER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)

COMPONENTS: tuple[str, ...] = (
    "core",
    "runs",
    "memory",
    "working_memory",
    "threads",
    "procedures",
)
"""Components in the order their migrations apply (later ones may reference earlier)."""


def load_queries(package: str) -> dict[str, str]:
    """Parse ``queries/<component>.sql`` of ``package`` into ``{name: sql}``.

    Each query starts with a ``-- name: some_query`` line; names are unique across files.
    """
    queries: dict[str, str] = {}
    for component in COMPONENTS:
        path = f"queries/{component}.sql"
        text = resources.files(package).joinpath(path).read_text("utf-8")
        parts = _HEADER.split(text)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name in queries:
                raise RuntimeError(f"{package}/{path} defines {name!r} again")
            queries[name] = body.strip().rstrip(";")
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
