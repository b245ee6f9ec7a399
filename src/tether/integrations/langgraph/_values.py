"""Channel values to rows and back: a list that grew is stored as what was appended.

LangGraph hands the checkpointer every channel's whole value at every checkpoint. Scalars
(``None``, numbers, short strings: counters, the trigger channels that say which node runs
next) travel inline in the checkpoint row, one serializer call for all of them; any other
value is a row of its own, written once per version. A message list that gains one
message a step would cost the square of the steps if each version were stored whole:
:class:`ChannelValues` keeps, per thread, namespace and channel, the last list it stored
or loaded; a new version of that list that starts with (at least half of) it is stored as
``keep`` (how many leading items carry over) and the items after them. Reading a value
follows that chain back to a whole value. A chain never grows past :data:`MAX_CHAIN` rows:
the next version is stored whole.

Items are compared by identity first, then by equality: LangGraph's reducers build a new
list from the old items, so a value is treated as immutable once checkpointed (an item
changed in place after it was stored is not noticed, as it would not be by a reducer).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from tether.errors import StorageError
from tether.storage.rows import GraphBlobRow

MAX_CHAIN = 1000
"""Most rows one value's chain may have before a version is stored whole again."""
INLINE_TEXT = 256
"""Longest string stored inline in the checkpoint row."""


@dataclass
class _Known:
    version: str
    items: list[Any]
    depth: int


@dataclass(frozen=True)
class Encoded:
    """One checkpoint's values: the scalars inline (type tag and bytes, or ``None``), the
    channels stored apart, the rows of their new versions, and what to remember once the
    checkpoint is stored."""

    inline: tuple[str, bytes] | None
    blob_channels: tuple[str, ...]
    rows: list[GraphBlobRow]
    lists: dict[tuple[str, str, str], _Known]


class ChannelValues:
    """Encodes and decodes the channel values of a checkpointer's threads.

    Thread-safe; remembers at most ``size`` lists (the least recently used go first).
    """

    def __init__(self, *, size: int = 1024) -> None:
        self._size = size
        self._lists: OrderedDict[tuple[str, str, str], _Known] = OrderedDict()
        self._versions: OrderedDict[tuple[str, str], tuple[str, dict[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def encode(
        self,
        serde: SerializerProtocol,
        thread_id: str,
        checkpoint_ns: str,
        parent_id: str | None,
        values: Mapping[str, Any],
        new_versions: Mapping[str, Any],
    ) -> Encoded:
        """The scalars inline; a row for each other value at a new version: a list that
        grew from its version in the parent checkpoint as the items appended, anything
        else whole."""
        inline: dict[str, Any] = {}
        others: list[str] = []
        for channel, value in values.items():
            kind = type(value)
            if (
                value is None
                or kind is int
                or kind is bool
                or kind is float
                or (kind is str and len(value) <= INLINE_TEXT)
            ):
                inline[channel] = value
            else:
                others.append(channel)
        apart = tuple(others)
        rows: list[GraphBlobRow] = []
        lists: dict[tuple[str, str, str], _Known] = {}
        if not apart:
            return Encoded(serde.dumps_typed(inline) if inline else None, apart, rows, lists)
        parent = self._parent_versions(thread_id, checkpoint_ns, parent_id)
        for channel in apart:
            if channel not in new_versions:
                continue
            version = str(new_versions[channel])
            value = values[channel]
            key = (thread_id, checkpoint_ns, channel)
            base = self._base(key, parent.get(channel)) if type(value) is list else None
            keep = _common_prefix(base.items, value) if base is not None else 0
            if base is not None and keep and keep * 2 >= len(base.items):
                type_, data = serde.dumps_typed(value[keep:])
                rows.append(
                    GraphBlobRow(checkpoint_ns, channel, version, type_, data, base.version, keep)
                )
                depth = base.depth + 1
            else:
                type_, data = serde.dumps_typed(value)
                rows.append(GraphBlobRow(checkpoint_ns, channel, version, type_, data))
                depth = 0
            if type(value) is list:
                lists[key] = _Known(version, list(value), depth)
        packed = serde.dumps_typed(inline) if inline else None
        return Encoded(packed, apart, rows, lists)

    def stored(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        versions: Mapping[str, Any],
        encoded: Encoded,
    ) -> None:
        """Remember a checkpoint that was stored, so its child can extend its lists (one
        whose values all travel inline leaves nothing to extend)."""
        if not encoded.blob_channels:
            return
        with self._lock:
            for key, known in encoded.lists.items():
                self._remember_list(key, known)
            self._remember_versions(thread_id, checkpoint_ns, checkpoint_id, versions)

    def decode(
        self,
        serde: SerializerProtocol,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        versions: Mapping[str, Any],
        inline: tuple[str, bytes] | None,
        chains: Mapping[str, Sequence[GraphBlobRow]],
    ) -> dict[str, Any]:
        """The channel values of a loaded checkpoint (channels without one left out)."""
        values: dict[str, Any] = dict(serde.loads_typed(inline)) if inline else {}
        known: dict[tuple[str, str, str], _Known] = {}
        for channel, chain in chains.items():
            if not chain:
                continue
            value = _value(serde, channel, chain)
            values[channel] = value
            if type(value) is list:
                known[(thread_id, checkpoint_ns, channel)] = _Known(
                    chain[0].version, list(value), len(chain) - 1
                )
        with self._lock:
            for key, entry in known.items():
                self._remember_list(key, entry)
            self._remember_versions(thread_id, checkpoint_ns, checkpoint_id, versions)
        return values

    def forget(self, thread_ids: Sequence[str] | None = None) -> None:
        """Forget what was remembered of these threads (every thread: ``None``), after
        their stored values may have been deleted."""
        with self._lock:
            if thread_ids is None:
                self._lists.clear()
                self._versions.clear()
                return
            gone = set(thread_ids)
            for key in [k for k in self._lists if k[0] in gone]:
                del self._lists[key]
            for pair in [k for k in self._versions if k[0] in gone]:
                del self._versions[pair]

    # -- internals -------------------------------------------------------------------------

    def _parent_versions(
        self, thread_id: str, checkpoint_ns: str, parent_id: str | None
    ) -> dict[str, str]:
        if parent_id is None:
            return {}
        with self._lock:
            remembered = self._versions.get((thread_id, checkpoint_ns))
        if remembered is None or remembered[0] != parent_id:
            return {}
        return remembered[1]

    def _base(self, key: tuple[str, str, str], version: str | None) -> _Known | None:
        if version is None:
            return None
        with self._lock:
            known = self._lists.get(key)
        if known is None or known.version != version or known.depth + 1 >= MAX_CHAIN:
            return None
        return known

    def _remember_list(self, key: tuple[str, str, str], known: _Known) -> None:
        self._lists[key] = known
        self._lists.move_to_end(key)
        while len(self._lists) > self._size:
            self._lists.popitem(last=False)

    def _remember_versions(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, versions: Mapping[str, Any]
    ) -> None:
        pair = (thread_id, checkpoint_ns)
        self._versions[pair] = (checkpoint_id, {k: str(v) for k, v in versions.items()})
        self._versions.move_to_end(pair)
        while len(self._versions) > self._size:
            self._versions.popitem(last=False)


def _value(serde: SerializerProtocol, channel: str, chain: Sequence[GraphBlobRow]) -> Any:
    deepest = chain[-1]
    if deepest.base_version is not None or deepest.data is None:
        raise StorageError(
            f"the stored value of channel {channel!r} at version {chain[0].version} is "
            f"incomplete: version {deepest.base_version} it extends is missing"
        )
    value = serde.loads_typed((deepest.type, deepest.data))
    for row in reversed(chain[:-1]):
        appended = serde.loads_typed((row.type, row.data or b""))
        value = list(value[: row.keep]) + list(appended)
    return value


def _common_prefix(old: Sequence[Any], new: Sequence[Any]) -> int:
    """How many leading items ``new`` shares with ``old`` (same object, or equal)."""
    count = 0
    for before, after in zip(old, new, strict=False):
        if before is not after and not _equal(before, after):
            break
        count += 1
    return count


def _equal(before: Any, after: Any) -> bool:
    try:
        return bool(before == after)
    except Exception:  # an item whose == does not give a truth value (an array)
        return False
