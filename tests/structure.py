"""The structure of a database, as comparable data (never as SQL text).

Two databases with equal snapshots have the same tables, columns, keys, indexes, triggers,
policies and grants, and the same recorded schema versions, whatever text made them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.support import TestDatabase

APP_ROLES = ("tether_app", "tether_system")


def normalise(sql: str | None) -> str | None:
    return " ".join(sql.split()) if sql is not None else None


def snapshot(database: TestDatabase) -> dict[str, Any]:
    if database.backend == "sqlite":
        assert database.path is not None
        return sqlite_snapshot(database.path)
    with database.raw() as raw:
        return postgres_snapshot(raw.conn)


def sqlite_snapshot(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    try:
        objects = conn.execute(
            "SELECT type, name, tbl_name FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        tables = [name for kind, name, _ in objects if kind == "table"]
        shape: dict[str, Any] = {"objects": objects}
        for table in tables:
            indexes = []
            for _, index, unique, origin, partial in conn.execute(
                f'PRAGMA index_list("{table}")'
            ).fetchall():
                columns = conn.execute(f'PRAGMA index_xinfo("{index}")').fetchall()
                indexes.append((index, unique, origin, partial, columns))
            shape[f"table {table}"] = {
                "columns": conn.execute(f'PRAGMA table_xinfo("{table}")').fetchall(),
                "indexes": sorted(indexes),
                "foreign_keys": conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall(),
                "kind": conn.execute(
                    "SELECT type, ncol, wr, strict FROM pragma_table_list WHERE name = ?",
                    (table,),
                ).fetchall(),
            }
        shape["triggers"] = [
            (name, table, normalise(sql))
            for name, table, sql in conn.execute(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
            )
        ]
        shape["views"] = [
            (name, normalise(sql))
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name"
            )
        ]
        if "tether_schema_versions" in tables:
            shape["versions"] = conn.execute(
                "SELECT component, version, name FROM tether_schema_versions "
                "ORDER BY component, version"
            ).fetchall()
        return shape
    finally:
        conn.close()


POSTGRES_QUERIES = {
    "relations": """
        SELECT c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' ORDER BY c.relname
    """,
    "columns": """
        SELECT table_name, column_name, ordinal_position, data_type, is_nullable,
               column_default, character_maximum_length, numeric_precision, is_identity
        FROM information_schema.columns WHERE table_schema = 'public'
        ORDER BY table_name, ordinal_position
    """,
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' ORDER BY tablename, indexname
    """,
    "constraints": """
        SELECT conrelid::regclass::text, conname, contype, pg_get_constraintdef(oid)
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace
        ORDER BY 1, 2
    """,
    "policies": """
        SELECT tablename, policyname, permissive, roles::text, cmd, qual, with_check
        FROM pg_policies WHERE schemaname = 'public' ORDER BY tablename, policyname
    """,
    "triggers": """
        SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid), tgenabled
        FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2
    """,
    "functions": """
        SELECT p.proname, pg_get_functiondef(p.oid)
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' ORDER BY p.proname
    """,
    "table_grants": """
        SELECT grantee, table_name, privilege_type
        FROM information_schema.role_table_grants
        WHERE table_schema = 'public' AND grantee IN ('tether_app', 'tether_system')
        ORDER BY 1, 2, 3
    """,
    "column_grants": """
        SELECT grantee, table_name, column_name, privilege_type
        FROM information_schema.column_privileges
        WHERE table_schema = 'public' AND grantee IN ('tether_app', 'tether_system')
        ORDER BY 1, 2, 3, 4
    """,
    "schema_grants": """
        SELECT r.rolname, has_schema_privilege(r.rolname, 'public', 'USAGE'),
               has_schema_privilege(r.rolname, 'public', 'CREATE')
        FROM pg_roles r WHERE r.rolname IN ('tether_app', 'tether_system') ORDER BY 1
    """,
}


def postgres_snapshot(conn: Any) -> dict[str, Any]:
    shape: dict[str, Any] = {}
    for name, query in POSTGRES_QUERIES.items():
        rows = [tuple(row) for row in conn.execute(query).fetchall()]
        if name == "functions":
            rows = [(proname, normalise(text)) for proname, text in rows]
        shape[name] = rows
    exists = conn.execute("SELECT to_regclass('public.tether_schema_versions')").fetchone()[0]
    if exists is not None:
        shape["versions"] = [
            tuple(row)
            for row in conn.execute(
                "SELECT component, version, name FROM tether_schema_versions "
                "ORDER BY component, version"
            ).fetchall()
        ]
    return shape
