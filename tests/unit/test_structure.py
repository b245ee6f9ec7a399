"""The package's shape: one-way imports, modules that stay small, docs that name what exists.

Read from the source with ``ast`` (nothing is imported), so the checks cost milliseconds
and need no third-party tool. Every import counts, wherever it is written: at module
level, inside a function, or under ``if TYPE_CHECKING:``. Two modules that import each
other only for type hints still know each other, and that is what makes a package hard
to change.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src"
PACKAGE = SOURCE / "tether"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 600


def module_files() -> dict[str, Path]:
    """Every module of ``src/tether`` by dotted name (a package by its own name)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> Iterator[str]:
    """The dotted names ``module`` imports, relative imports resolved.

    ``from pkg import name`` gives ``pkg.name`` when that is a module, else ``pkg``.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    modules = MODULES
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield candidate if candidate in modules else base


def import_graph() -> dict[str, set[str]]:
    """Each module of ``src/tether`` and the modules of ``src/tether`` it imports."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, path in MODULES.items():
        for name in imported_names(module, path):
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].add(name)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other (Tarjan), each sorted; singles left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def one_cycle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    return group


MODULES = module_files()


def test_the_import_graph_reads_every_kind_of_import() -> None:
    graph = import_graph()
    assert "tether.memory.embeddings" in graph["tether.app"]  # under TYPE_CHECKING
    assert "tether.memory.pii" in graph["tether.memory.policy"]  # in a function
    assert "tether.errors" in graph["tether.memory.embeddings"]  # at module level


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph()
    cycles = [
        f"{' <-> '.join(group)} (e.g. {' -> '.join(one_cycle(graph, group))})"
        for group in strongly_connected(graph)
    ]
    assert not cycles, "modules of src/tether that import each other:\n" + "\n".join(cycles)


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): count
        for path in MODULES.values()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split by responsibility): {long}"


CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
DIAGRAM_NAME = re.compile(r"(?<![\w/.])(?:[a-z_]+/)+|(?<![\w/.])[a-z_]+\.py\b")
OTHER_TOP_LEVEL = ("tests/", "examples/", "bench/", "docs/", "scripts/")


def named_paths(text: str) -> set[str]:
    """What the page names under ``src/tether``: paths, packages, files and dotted modules.

    Code spans are read whole (``src/tether/x.py``, ``runs/context.py``, ``cli/``,
    ``pii.py``, ``tether.runs.models``); in the diagrams every ``name/`` and ``name.py``.
    URLs, shell commands and paths outside the package are left out.
    """
    names = set()
    for block in FENCE.findall(text):
        names.update(DIAGRAM_NAME.findall(block))
    for span in CODE_SPAN.findall(FENCE.sub("", text)):
        span = span.strip()
        if " " in span or "://" in span or span.startswith(OTHER_TOP_LEVEL):
            continue
        if "/" in span or span.endswith(".py") or re.fullmatch(r"tether(\.\w+)+", span):
            names.add(span)
    return names


def exists(name: str) -> bool:
    """Whether ``name`` is a path, package, file or module under ``src/tether``.

    A placeholder (``storage/<backend>/queries``) is checked up to the placeholder; a bare
    file name anywhere in the package; a dotted name as a module, or a name a module
    defines.
    """
    if re.fullmatch(r"tether(\.\w+)+", name):
        module = name
        while module not in MODULES and "." in module:
            module = module.rpartition(".")[0]
        if module not in MODULES:
            return False
        rest = name[len(module) + 1 :].split(".")[0]
        return not rest or re.search(rf"\b{rest}\b", MODULES[module].read_text()) is not None
    path = name.split("<", 1)[0].rstrip("/")
    if path == "src/tether":
        return True
    path = path.removeprefix("src/tether/")
    if "/" not in path and path.endswith(".py"):
        return any(PACKAGE.rglob(path))
    return (PACKAGE / path).exists()


def test_the_architecture_page_names_only_what_exists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    names = named_paths(text)
    assert {"src/tether/app.py", "cli/", "storage/base.py", "tether.memory"} <= names
    missing = sorted(name for name in names if not exists(name))
    assert not missing, f"docs/architecture.md names what src/tether does not have: {missing}"


def own_names(path: Path) -> set[str]:
    """Names a module defines itself at top level (not imports)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_modules_inside_the_package_import_from_the_defining_module() -> None:
    """The public lists are for users: a module of ``src/tether`` that imports a name
    through a package ``__init__`` that only re-exports it depends on everything that
    list names."""
    packages = {module: path for module, path in MODULES.items() if path.name == "__init__.py"}
    offenders = []
    for module, path in MODULES.items():
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module not in packages:
                continue
            defined = own_names(packages[node.module])
            for alias in node.names:
                if f"{node.module}.{alias.name}" not in MODULES and alias.name not in defined:
                    offenders.append(f"{module}: from {node.module} import {alias.name}")
    assert not offenders, "import these from their defining module:\n" + "\n".join(offenders)


def test_no_statement_follows_a_return_raise_break_or_continue() -> None:
    """Code after a jump never runs: a merge that keeps both sides of a function leaves it
    behind, and ruff's stable rules do not flag it."""
    dead = []
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if not isinstance(block, list):
                    continue
                jumps = (ast.Return, ast.Raise, ast.Break, ast.Continue)
                dead += [
                    f"{path.relative_to(ROOT)}:{following.lineno}"
                    for statement, following in itertools.pairwise(block)
                    if isinstance(statement, jumps)
                ]
    assert not dead, f"unreachable statements: {dead}"
