"""A run's timeline as the console shows it, built from what ``app.runs`` returns.

Checkpoints are stored as a full state or as the change against the previous one; the
console rebuilds each checkpoint's state in order and shows what changed between
consecutive checkpoints, each change with the value before and after, whichever way it was
stored. Pure: no database, no web.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tether import canonical
from tether.runs import delta
from tether.runs.models import Checkpoint, JournalEntry, JournalKind

_MISSING = object()


@dataclass(frozen=True)
class Change:
    """One change between two checkpoints' states."""

    op: str
    """``set`` (added or changed), ``del`` (removed) or ``append`` (items added to a list)."""
    path: str
    before: Any
    after: Any
    existed: bool
    """Whether ``path`` held a value before (``set`` of a new key: no)."""


@dataclass(frozen=True)
class CheckpointView:
    seq: int
    node: str
    next_node: str
    kind: str
    state_version: int
    created_at: datetime
    bytes: int
    changes: list[Change]
    state: dict[str, Any] | None
    """The state at this checkpoint (``None`` if an earlier checkpoint it builds on was
    removed by compaction)."""


@dataclass(frozen=True)
class JournalView:
    entry: JournalEntry
    result: Any
    has_result: bool


def _at(document: Any, path: Sequence[Any]) -> Any:
    here = document
    for key in path:
        try:
            here = here[key]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return here


def _path(path: Sequence[Any]) -> str:
    return ".".join(str(part) for part in path) or "(whole state)"


def changes_between(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """What changed from ``before`` to ``after``, one entry per changed path."""
    found = []
    for op in delta.diff(before, after):
        kind, path = op[0], op[1]
        old = _at(before, path)
        found.append(
            Change(
                op=kind,
                path=_path(path),
                before=None if old is _MISSING else old,
                after=op[2] if kind in ("set", "append") else None,
                existed=old is not _MISSING,
            )
        )
    return found


def checkpoint_views(checkpoints: Sequence[Checkpoint]) -> list[CheckpointView]:
    """Each checkpoint with its state and the changes since the one before (the first:
    everything it holds, as set)."""
    views = []
    state: dict[str, Any] | None = {}
    for checkpoint in checkpoints:
        payload = canonical.loads(checkpoint.payload)
        previous = state
        if checkpoint.kind == "full":
            state = payload if isinstance(payload, dict) else {"value": payload}
        elif state is not None:
            try:
                state = delta.apply(copy.deepcopy(state), payload)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                state = None
        if previous is not None and state is not None:
            changes = changes_between(previous, state)
        else:
            changes = [
                Change(op=op[0], path=_path(op[1]), before=None, after=op[-1], existed=False)
                for op in (payload if isinstance(payload, list) else [])
            ]
        views.append(
            CheckpointView(
                seq=checkpoint.seq,
                node=checkpoint.node,
                next_node=checkpoint.next_node,
                kind=checkpoint.kind,
                state_version=checkpoint.state_version,
                created_at=checkpoint.created_at,
                bytes=len(checkpoint.payload),
                changes=changes,
                state=state,
            )
        )
    return views


def journal_views(
    entries: Sequence[JournalEntry], *, kinds: Sequence[JournalKind]
) -> list[JournalView]:
    """The journal entries of ``kinds`` with their results decoded."""
    views = []
    for entry in entries:
        if entry.kind not in kinds:
            continue
        result: Any = None
        if entry.result is not None:
            try:
                result = canonical.loads(entry.result)
            except ValueError:
                result = entry.result
        views.append(JournalView(entry=entry, result=result, has_result=entry.result is not None))
    return views
