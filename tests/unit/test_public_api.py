"""The public lists: ``tether`` and each package's ``__all__``.

Every listed name resolves; a lazily exported name comes from the module that defines it,
and the ``if TYPE_CHECKING:`` imports type checkers read name the same modules; importing
a package loads none of the modules behind its names.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import tether
from tests.unit.test_structure import MODULES

PACKAGES = sorted(module for module, path in MODULES.items() if path.name == "__init__.py")
LAZY = [package for package in PACKAGES if "_EXPORTS" in MODULES[package].read_text()]


def type_checking_imports(path: Path) -> dict[str, str]:
    """The names imported under ``if TYPE_CHECKING:`` in ``path``, with their modules."""
    names = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                names.update((alias.name, statement.module) for alias in statement.names)
    return names


def test_the_top_level_and_the_domain_packages_load_lazily() -> None:
    lazy = {
        "tether",
        "tether.audit",
        "tether.context",
        "tether.memory",
        "tether.procedures",
        "tether.runs",
        "tether.threads",
        "tether.working",
    }
    assert lazy <= set(LAZY)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_all_resolves(package: str) -> None:
    module = importlib.import_module(package)
    public = getattr(module, "__all__", [])
    assert len(public) == len(set(public)), f"{package}.__all__ repeats a name"
    missing = [name for name in public if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ lists names it does not have: {missing}"


@pytest.mark.parametrize("package", LAZY)
def test_each_lazy_name_comes_from_its_defining_module(package: str) -> None:
    module = importlib.import_module(package)
    exports: dict[str, str] = module._EXPORTS
    assert set(exports) <= set(module.__all__)
    assert type_checking_imports(MODULES[package]) == exports
    for name, source in exports.items():
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(source), name)
        defined_in = getattr(value, "__module__", source)
        assert defined_in == source, f"{package}.{name} is defined in {defined_in}, not {source}"
    assert dir(module) == sorted(module.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = module.Nope


def test_importing_the_packages_loads_nothing_behind_their_names() -> None:
    code = (
        "import sys, tether, tether.memory, tether.procedures, tether.audit, tether.working\n"
        "print(' '.join(sorted(name for name in sys.modules if name.startswith('tether'))))"
    )
    source = str(Path(tether.__file__).resolve().parents[1])
    loaded = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {source!r})\n{code}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert loaded == [
        "tether",
        "tether._exports",
        "tether.audit",
        "tether.memory",
        "tether.procedures",
        "tether.working",
    ]
