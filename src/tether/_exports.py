"""Lazy public names for package ``__init__`` modules (PEP 562).

A package lists its public names and the submodule that defines each; the submodule is
imported the first time one of its names is read, not when the package is. So
``import tether`` stays cheap, ``from tether.memory import Scope`` does not load the
embedder, and importing a model from a package never drags in the services beside it,
which is what would let two packages import each other. Type checkers and editors see the
same names through the package's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(
    package: str, exports: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Args:
        package: the package's ``__name__``.
        exports: each lazily loaded name and the module that defines it.
        public: the package's ``__all__``, which ``dir()`` lists.

    Returns:
        ``(__getattr__, __dir__)``, to assign at module level. A name read once is stored
        in the package, so later reads do not come back here.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
