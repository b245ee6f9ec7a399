"""Time travel: a new run forked from any checkpoint of another.

Checkpoint ``k`` records the state after the ``k``-th node visit and the node that came
next. A fork is a new run of the same workflow version whose history is the original's up
to ``k`` (checkpoints ``0..k`` copied, the ``k``-th as a full snapshot), with an optional
patch of the state on top, that goes on from the node after ``k``. It has its own run id
and no journal, so every effect it makes has a new idempotency key: effects the original
journaled after ``k`` run again if the fork takes the same path. :func:`plan_fork_txn`
lists them; the original's rows are only read.

A checkpoint's visit counts come from the checkpoints themselves: every node visit a run
completes, skips or abandons writes one checkpoint naming the node (``tether runs skip``,
``complete`` and ``retry-node`` do too), so the visits up to ``k`` are the number of
checkpoints ``1..k`` naming each node, and an effect of visit ``v`` of node ``n`` came
after ``k`` exactly when ``v`` is above that count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether import canonical
from tether.errors import InvalidInput, NotFound
from tether.runs import delta
from tether.runs.claim import idempotency_key
from tether.runs.inspection import EffectRecord
from tether.runs.models import END, Checkpoint, JournalKind, Run, RunStatus
from tether.storage.stores import RunStore


class RerunEffect(BaseModel):
    """An effect the original journaled after the fork's checkpoint: the fork runs it
    again, under ``new_key``, if it takes the same path."""

    model_config = ConfigDict(frozen=True)

    effect: EffectRecord
    new_key: str | None
    """Its key in the fork (known once the fork's run id is)."""


class ForkPlan(BaseModel):
    """What forking a run from one of its checkpoints would do."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    checkpoint: int
    node: str
    """The node the fork starts at (the one after the checkpoint)."""
    state: dict[str, Any]
    """The state at the checkpoint (before any patch)."""
    rerun: list[RerunEffect]


class History(BaseModel):
    """A run's checkpoints up to ``k``, and what they imply."""

    model_config = ConfigDict(frozen=True)

    checkpoints: list[Checkpoint]
    state: dict[str, Any]
    state_version: int
    visits: dict[str, int]


def history_txn(txn: RunStore, run: Run, seq: int) -> History:
    """The checkpoints ``0..seq`` of ``run`` (those retention kept), the state at ``seq``
    and the node visits it had completed.

    Raises:
        NotFound: no checkpoint ``seq`` (past the last, or compacted by retention).
    """
    checkpoints = [c for c in txn.list_checkpoints(run.tenant_id, run.run_id) if c.seq <= seq]
    if not checkpoints or checkpoints[-1].seq != seq:
        raise NotFound(
            f"run {run.run_id} has no checkpoint {seq} (its checkpoints run from 0 to "
            f"{run.checkpoint_seq}; retention keeps only the last of an old run)"
        )
    state: dict[str, Any] = {}
    for checkpoint in checkpoints:
        payload = canonical.loads(checkpoint.payload)
        state = payload if checkpoint.kind == "full" else delta.apply(state, payload)
    visits = Counter(c.node for c in checkpoints if c.seq > 0 and c.node)
    return History(
        checkpoints=checkpoints,
        state=state,
        state_version=checkpoints[-1].state_version,
        visits=dict(visits),
    )


def plan_fork_txn(txn: RunStore, run: Run, history: History, new_run_id: str | None) -> ForkPlan:
    """The fork of ``run`` from the checkpoint ``history`` ends at: where it starts, and
    the effects the original journaled after it (with their keys in the fork when
    ``new_run_id`` is given)."""
    seq = history.checkpoints[-1].seq
    start = history.checkpoints[-1].next_node
    if start == END:
        raise InvalidInput(
            f"checkpoint {seq} of run {run.run_id} is its last (the run ended there): fork "
            "from an earlier one"
        )
    after = [
        entry
        for entry in txn.list_journal(run.tenant_id, run.run_id)
        if entry.kind is JournalKind.EFFECT and entry.visit > history.visits.get(entry.node, 0)
    ]
    order = _visit_order(txn.list_checkpoints(run.tenant_id, run.run_id))
    unfinished = max(order.values(), default=0) + 1
    after.sort(key=lambda e: (order.get((e.node, e.visit), unfinished), e.started_at, e.position))
    rerun = [
        RerunEffect(
            effect=EffectRecord.of(entry),
            new_key=idempotency_key(
                run.tenant_id, new_run_id, entry.node, entry.visit, entry.position, entry.name
            )
            if new_run_id
            else None,
        )
        for entry in after
    ]
    return ForkPlan(run_id=run.run_id, checkpoint=seq, node=start, state=history.state, rerun=rerun)


def _visit_order(checkpoints: Sequence[Checkpoint]) -> dict[tuple[str, int], int]:
    """The seq of the checkpoint that ended each node visit: the order the run took."""
    seen: Counter[str] = Counter()
    order = {}
    for checkpoint in checkpoints:
        if checkpoint.seq > 0 and checkpoint.node:
            seen[checkpoint.node] += 1
            order[(checkpoint.node, seen[checkpoint.node])] = checkpoint.seq
    return order


def fork_rows(
    run: Run,
    history: History,
    *,
    new_run_id: str,
    state: Mapping[str, Any] | None,
    state_version: int,
    created_by: str,
    now: datetime,
) -> tuple[Run, list[Checkpoint]]:
    """The fork's run row (queued) and checkpoints: the original's up to ``k``, the last
    as a full snapshot, then the patched ``state`` if there is one (a checkpoint of no
    node)."""
    last = history.checkpoints[-1]
    copied = [c.model_copy(update={"run_id": new_run_id}) for c in history.checkpoints[:-1]]
    full = canonical.dumps(history.state, trusted=True)
    copied.append(last.model_copy(update={"run_id": new_run_id, "kind": "full", "payload": full}))
    if state is not None:
        full = canonical.dumps(dict(state), trusted=True)
        copied.append(
            last.model_copy(
                update={
                    "run_id": new_run_id,
                    "seq": last.seq + 1,
                    "node": "",
                    "kind": "full",
                    "payload": full,
                    "state_version": state_version,
                    "created_at": now,
                }
            )
        )
    head = copied[-1]
    fork = run.model_copy(
        update={
            "run_id": new_run_id,
            "status": RunStatus.QUEUED,
            "current_node": head.next_node,
            "state_version": head.state_version,
            "checkpoint_seq": head.seq,
            "full_seq": head.seq,
            "delta_bytes": 0,
            "full_bytes": len(full),
            "event_seq": 1,
            "version": 1,
            "lease_owner": None,
            "lease_expires_at": None,
            "lease_epoch": 0,
            "attempt": 0,
            "steps": sum(history.visits.values()),
            "deadline": None,
            "resume_at": None,
            "wait_id": None,
            "cancel_requested": False,
            "cancel_reason": None,
            "error": None,
            "visits": dict(history.visits),
            "created_at": now,
            "created_by": created_by,
            "updated_at": now,
            "updated_by": created_by,
            "storage_faults": 0,
            "parent_run_id": None,
            "parent_wait_id": None,
            "child_serial": False,
        }
    )
    return fork, copied


def patched(state: Mapping[str, Any], patch: Mapping[str, Any] | None) -> dict[str, Any]:
    """``state`` with each top-level field of ``patch`` replaced."""
    return {**state, **(patch or {})}


def effect_names(effects: Sequence[RerunEffect]) -> str:
    """``name (key)`` of each effect, for a message."""
    return ", ".join(f"{r.effect.name} ({r.effect.idempotency_key})" for r in effects)


def effect_lines(effects: Sequence[RerunEffect]) -> list[str]:
    """``name (key): outcome`` of each effect, for a message."""
    return [f"{r.effect.name} ({r.effect.idempotency_key}): {r.effect.label}" for r in effects]
