"""A LangGraph thread's checkpoints as a timeline: what each step changed and left
pending, and where the graph stopped for a person.

Built from stored rows without the serializer (the values are LangGraph's bytes, which
only the graph's own process may read): each checkpoint with its step and source (from
its metadata), the channels whose version changed since the checkpoint before it, the
pending writes of its step (task, node, channel, size) and the interrupts it raised as
Tether waits. Pure: no database.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from tether.runs.models import Wait
from tether.storage.rows import GraphCheckpointRow, GraphWriteSummaryRow


class GraphPendingWrite(BaseModel):
    """A task's write waiting on a checkpoint (its value is not shown: only its size)."""

    task_id: str
    node: str = Field(description="The node that wrote it (the last part of its task path).")
    channel: str
    bytes: int = Field(description="Size of the serialized value.")


class GraphInterruptView(BaseModel):
    """An ``interrupt()`` of the step, as the Tether wait that answers it."""

    wait_id: str
    node: str
    kind: str = Field(description="`approval` or `interrupt` (a question).")
    status: str
    message: str


class GraphCheckpointView(BaseModel):
    """One checkpoint of a LangGraph thread, in a timeline oldest first."""

    checkpoint_id: str
    checkpoint_ns: str = Field(description="Empty for the graph itself; a subgraph's otherwise.")
    parent_checkpoint_id: str | None
    step: int | None = Field(description="LangGraph's step (-1: the input).")
    source: str | None = Field(description="`input`, `loop`, `update` or `fork`.")
    created_at: datetime | None
    changed: list[str] = Field(
        description="Channels whose version changed since the checkpoint before (the first: "
        "every channel it has)."
    )
    pending_writes: list[GraphPendingWrite]
    interrupts: list[GraphInterruptView]


def timeline(
    checkpoints: Sequence[GraphCheckpointRow],
    writes: Sequence[GraphWriteSummaryRow],
    waits: Sequence[Wait],
) -> list[GraphCheckpointView]:
    """The checkpoints oldest first (by id, a subgraph's after the graph's own at a tie),
    each compared with its parent (or, without one stored, the namespace's checkpoint
    before it)."""
    pending: dict[tuple[str, str], list[GraphPendingWrite]] = {}
    for write in writes:
        pending.setdefault((write.checkpoint_ns, write.checkpoint_id), []).append(
            GraphPendingWrite(
                task_id=write.task_id,
                node=_node(write.task_path),
                channel=write.channel,
                bytes=write.size,
            )
        )
    raised: dict[str, list[GraphInterruptView]] = {}
    for wait in waits:
        checkpoint_id = wait.request.get("checkpoint_id")
        if isinstance(checkpoint_id, str):
            raised.setdefault(checkpoint_id, []).append(
                GraphInterruptView(
                    wait_id=wait.wait_id,
                    node=wait.node,
                    kind=wait.kind.value,
                    status=wait.status.value,
                    message=wait.message,
                )
            )
    ordered = sorted(checkpoints, key=lambda row: (row.checkpoint_id, row.checkpoint_ns))
    versions: dict[tuple[str, str], Mapping[str, str]] = {}
    latest: dict[str, Mapping[str, str]] = {}
    views = []
    for row in ordered:
        data = _object(row.checkpoint_json)
        metadata = _object(row.metadata_json)
        mine = {str(k): str(v) for k, v in _object(data.get("channel_versions")).items()}
        parent = row.parent_checkpoint_id
        before = versions.get((row.checkpoint_ns, parent)) if parent else None
        if before is None:
            before = latest.get(row.checkpoint_ns, {})
        versions[(row.checkpoint_ns, row.checkpoint_id)] = mine
        latest[row.checkpoint_ns] = mine
        step = metadata.get("step")
        source = metadata.get("source")
        views.append(
            GraphCheckpointView(
                checkpoint_id=row.checkpoint_id,
                checkpoint_ns=row.checkpoint_ns,
                parent_checkpoint_id=parent,
                step=step if type(step) is int else None,
                source=source if isinstance(source, str) else None,
                created_at=_moment(data.get("ts")),
                changed=sorted(c for c, v in mine.items() if before.get(c) != v),
                pending_writes=pending.get((row.checkpoint_ns, row.checkpoint_id), []),
                interrupts=raised.get(row.checkpoint_id, []) if row.checkpoint_ns == "" else [],
            )
        )
    return views


def _node(task_path: str) -> str:
    """``~__pregel_pull, node`` -> ``node``: the node a task ran."""
    return task_path.rsplit(",", 1)[-1].strip()


def _object(value: Any) -> dict[str, Any]:
    """A JSON object from stored text (anything else: empty)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
