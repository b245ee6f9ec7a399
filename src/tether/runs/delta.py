"""State deltas: checkpoints store what changed, not the whole state every time.

A delta is a list of operations on paths of a JSON document: ``["set", path, value]``,
``["del", path]`` and ``["append", path, items]``. Lists that only grew (messages, tool
outputs) become an ``append`` of the new items, so storage grows with what changed.
"""

from __future__ import annotations

from typing import Any

Op = list[Any]


def same(a: Any, b: Any) -> bool:
    """JSON equality: unlike ``==``, ``1``, ``1.0`` and ``True`` differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff(old: Any, new: Any, path: list[str] | None = None) -> list[Op]:
    """The operations that turn ``old`` into ``new``."""
    here = path or []
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[Op] = []
        for key in old.keys() - new.keys():
            ops.append(["del", [*here, key]])
        for key, value in new.items():
            if key not in old:
                ops.append(["set", [*here, key], value])
            elif not same(old[key], value):
                ops.extend(diff(old[key], value, [*here, key]))
        return ops
    grew = isinstance(old, list) and isinstance(new, list) and len(new) > len(old)
    if grew and all(same(x, y) for x, y in zip(old, new, strict=False)):
        return [["append", here, new[len(old) :]]]
    if same(old, new):
        return []
    return [["set", here, new]]


def apply(document: Any, ops: list[Op]) -> Any:
    """Apply ``ops`` to ``document`` in place (values are taken as they are) and return it."""
    result = document
    for op in ops:
        kind, path = op[0], op[1]
        if not path:
            if kind == "set":
                result = op[2]
            elif kind == "append":
                result.extend(op[2])
            continue
        parent = result
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        if kind == "set":
            parent[last] = op[2]
        elif kind == "del":
            del parent[last]
        elif kind == "append":
            parent[last].extend(op[2])
        else:
            raise ValueError(f"unknown delta operation {kind!r}")
    return result
