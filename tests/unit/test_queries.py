"""The one SQL tree: shared queries written once, backend folders only where SQL differs,
and the ``:name`` to ``%(name)s`` translation that lets psycopg run the shared text."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

import tether
from tether.storage._sqlfile import (
    SHARED_PACKAGE,
    ParamStyle,
    comparable,
    load_queries,
    read_queries,
    translate,
)

BACKENDS: dict[str, ParamStyle] = {
    "tether.storage.sqlite": "named",
    "tether.storage.postgres": "pyformat",
}
SOURCE = Path(tether.__file__).resolve().parent
RUNNERS = {"_fetch", "_one", "_fetch_many"}
"""Methods whose first argument is a query name."""
QUERY_MAPS = {"queries", "_queries"}
"""Names of the ``{name: sql}`` mappings the backends index directly."""


def test_no_override_repeats_the_shared_text() -> None:
    shared = read_queries(SHARED_PACKAGE)
    for package, style in BACKENDS.items():
        overrides = read_queries(package)
        repeated = [
            name
            for name, sql in overrides.items()
            if name in shared and comparable(sql, style) == comparable(shared[name], "named")
        ]
        assert repeated == [], f"{package} repeats the shared text of {repeated}: delete them"


def test_no_query_is_written_the_same_in_both_backend_folders() -> None:
    (first, first_style), (second, second_style) = BACKENDS.items()
    ones, others = read_queries(first), read_queries(second)
    alike = [
        name
        for name in ones.keys() & others.keys()
        if comparable(ones[name], first_style) == comparable(others[name], second_style)
    ]
    assert alike == [], f"{sorted(alike)} are the same on both backends: move them to queries/"


def test_no_shared_query_is_overridden_by_every_backend() -> None:
    shared = read_queries(SHARED_PACKAGE)
    overridden = [read_queries(package).keys() for package in BACKENDS]
    dead = shared.keys() & set.intersection(*(set(names) for names in overridden))
    assert dead == set(), f"no backend runs the shared text of {sorted(dead)}"


def test_the_loader_refuses_an_override_that_repeats_the_shared_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = read_queries(SHARED_PACKAGE)["get_tenant"]
    repeated = "  ".join(translate(shared, "pyformat").split("\n"))
    package = _backend_package(tmp_path, {"core": f"-- name: get_tenant\n{repeated};\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match="'get_tenant' with the text"):
        load_queries(package, "pyformat")


def test_the_loader_refuses_a_name_defined_twice_in_one_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "core": "-- name: backend_only\nSELECT 1;\n",
        "runs": "-- name: backend_only\nSELECT 2;\n",
    }
    package = _backend_package(tmp_path, files)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match=r"runs\.sql defines 'backend_only' again"):
        load_queries(package, "named")


def test_an_override_replaces_the_shared_text_and_a_new_name_is_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "core": (
            "-- name: get_tenant\nSELECT tenant_id FROM tenants WHERE tenant_id = %(tenant_id)s;\n"
            "\n-- name: backend_only\nSELECT 1;\n"
        )
    }
    package = _backend_package(tmp_path, files)
    monkeypatch.syspath_prepend(str(tmp_path))
    queries = load_queries(package, "pyformat")
    assert queries["get_tenant"] == "SELECT tenant_id FROM tenants WHERE tenant_id = %(tenant_id)s"
    assert queries["backend_only"] == "SELECT 1"
    assert queries["list_tenants"] == "SELECT * FROM tenants ORDER BY tenant_id"


def test_every_query_the_code_names_is_loaded_on_both_backends() -> None:
    loaded = {package: load_queries(package, style) for package, style in BACKENDS.items()}
    named: dict[str, set[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        for name in _query_names(path):
            named.setdefault(name, set()).add(path.relative_to(SOURCE).as_posix())
    assert len(named) > 50, "the scan found too few query names: are RUNNERS still right?"
    folders = {
        package: package.removeprefix("tether.").replace(".", "/") + "/" for package in BACKENDS
    }
    for package, queries in loaded.items():
        needed = {
            name
            for name, paths in named.items()
            if any(
                path.startswith(folders[package])
                or not any(path.startswith(folder) for folder in folders.values())
                for path in paths
            )
        }
        assert needed - queries.keys() == set(), f"{package} lacks queries the code runs"
    everything = set(itertools.chain.from_iterable(loaded.values()))
    listed = set().union(*(_listed_names(path) for path in SOURCE.rglob("*.py")))
    assert everything - named.keys() - listed == set(), "queries no code runs"


def test_translation_turns_parameters_into_psycopg_placeholders() -> None:
    sql = "SELECT * FROM t WHERE a = :a AND b_c = :b_c AND (:a IS NULL OR x = :a)"
    assert translate(sql, "pyformat") == (
        "SELECT * FROM t WHERE a = %(a)s AND b_c = %(b_c)s AND (%(a)s IS NULL OR x = %(a)s)"
    )
    assert translate(sql, "named") == sql


def test_translation_leaves_casts_literals_quoted_names_and_comments_alone() -> None:
    sql = (
        "-- reads :count rows, 100% of them, in the caller's transaction\n"
        "SELECT x::text, 'a:b', 'it''s :x', \"col:y\" /* :z */ FROM t WHERE n = :n::integer"
    )
    assert translate(sql, "pyformat") == (
        "-- reads :count rows, 100%% of them, in the caller's transaction\n"
        "SELECT x::text, 'a:b', 'it''s :x', \"col:y\" /* :z */ FROM t WHERE n = %(n)s::integer"
    )


def test_translation_doubles_every_percent_sign() -> None:
    sql = "SELECT a % 2 FROM t WHERE name LIKE '%' || :part || '%_%'"
    assert translate(sql, "pyformat") == (
        "SELECT a %% 2 FROM t WHERE name LIKE '%%' || %(part)s || '%%_%%'"
    )
    assert comparable(translate(sql, "pyformat"), "pyformat") == comparable(sql, "named")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t WHERE a = ?",
        "SELECT * FROM t WHERE a = $1",
        "SELECT $$:x$$",
        "SELECT * FROM t WHERE a = @a",
        "SELECT * FROM t WHERE a = %(a)s",
        "SELECT * FROM t WHERE a = %s",
        "SELECT E'\\':x'",
        "SELECT 'unterminated :x",
        'SELECT "unterminated',
        "SELECT 1 /* unterminated",
        "SELECT 1 /* nested /* */ :x */",
        "SELECT a[1:2] FROM t",
        "SELECT `a` FROM t",
        "SELECT x:::text",
        "SELECT :1",
    ],
)
def test_translation_refuses_what_the_two_drivers_could_read_differently(sql: str) -> None:
    for style in BACKENDS.values():
        with pytest.raises(ValueError, match="line 1: "):
            translate(sql, style)


def test_every_shared_query_reads_the_same_once_translated() -> None:
    for sql in read_queries(SHARED_PACKAGE).values():
        assert comparable(translate(sql, "pyformat"), "pyformat") == comparable(sql, "named")


def _backend_package(root: Path, files: dict[str, str]) -> str:
    package = f"fake_backend_{root.name}".replace("-", "_")
    queries = root / package / "queries"
    queries.mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    for component, text in files.items():
        (queries / f"{component}.sql").write_text(text)
    return package


def _query_names(path: Path) -> set[str]:
    """Every string literal passed as a query name in ``path`` (both arms of a conditional)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RUNNERS
            and node.args
        ):
            found |= _strings(node.args[0])
        elif isinstance(node, ast.Subscript) and _map_name(node.value) in QUERY_MAPS:
            found |= _strings(node.slice)
    return found


def _listed_names(path: Path) -> set[str]:
    """The names in ``(name, parameters)`` pairs of ``path``: statements listed to be run
    later by name (a thread's first rows, run in order by the code that takes them)."""
    return {
        node.elts[0].value
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Tuple)
        and len(node.elts) == 2
        and isinstance(node.elts[0], ast.Constant)
        and isinstance(node.elts[0].value, str)
        and isinstance(node.elts[1], (ast.Dict, ast.Name, ast.Call))
    }


def _strings(node: ast.AST) -> set[str]:
    return {
        sub.value
        for sub in ast.walk(node)
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str)
    }


def _map_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None
