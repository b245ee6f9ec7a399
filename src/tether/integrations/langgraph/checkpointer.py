"""``TetherSaver``: LangGraph's checkpointer on Tether's database, bound to one tenant.

Every call goes through ``app.graphs`` as the bound principal, so the permission map,
the tenant's transaction (row-level security on PostgreSQL) and the audit trail apply as
to any other caller. Values are serialized by LangGraph's serializer (``serde``, msgpack
with its allowlist by default; every row keeps its type tag) and stored once per version,
a growing list as what was appended (:mod:`tether.integrations.langgraph._values`).

Each thread is also a run (workflow ``langgraph``): ``tether runs ls`` lists it,
``tether retention set langgraph <days>`` and ``tether gc`` compact it, and an
``interrupt()`` is a wait that ``tether approvals`` or ``tether runs answer`` settles
(:func:`tether.integrations.langgraph.approvals.resume_command` resumes the graph with
it). The async methods run the sync ones in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, TASKS
from langgraph.types import Interrupt

from tether import canonical
from tether.errors import InvalidInput
from tether.integrations.langgraph._commit import GroupCommit
from tether.integrations.langgraph._values import ChannelValues
from tether.principals import Principal, Role
from tether.redaction import redact
from tether.runs.graph_runs import GraphInterrupt
from tether.runs.graphs import (
    GraphCheckpointWrite,
    GraphTaskWrites,
    GraphWrite,
    GraphWriter,
    StoredGraphCheckpoint,
)
from tether.storage.rows import GraphCheckpointRow, GraphWriteRow

if TYPE_CHECKING:
    from tether.app import Tether

APPROVAL = "approval"
"""``interrupt({"tether": "approval", ...})`` asks for an approval (see
:func:`tether.integrations.langgraph.approvals.request_approval`)."""
GRAPH_PRINCIPAL = "langgraph"
"""The principal a saver or store given only a tenant acts as (role ``operator``)."""
_TRIGGER = "branch:to:"
WRITES_WAIT_S = 0.005
"""How long a task's writes wait for the step's checkpoint to share its commit."""


def bind_principal(principal: Principal | None, tenant: str | None) -> Principal:
    """The principal to act as: the one given, or ``langgraph`` (operator) of ``tenant``."""
    if principal is not None:
        if tenant is not None and tenant != principal.tenant_id:
            raise InvalidInput(
                f"the principal belongs to tenant {principal.tenant_id!r}, not {tenant!r}"
            )
        return principal
    if tenant is None:
        raise InvalidInput("bind the LangGraph integration to a principal or a tenant")
    return Principal(tenant, GRAPH_PRINCIPAL, frozenset({Role.OPERATOR}))


class TetherSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer that stores threads in Tether, for one tenant.

    Example:
        >>> app = Tether.open(url="sqlite:///./tether.db")
        >>> graph = builder.compile(checkpointer=TetherSaver(app, principal))

    Args:
        app: the open Tether application (SQLite or PostgreSQL).
        principal: who the graph acts as (``runs.start`` to write, ``runs.read`` to read,
            ``runs.control`` to delete or prune); or give ``tenant`` alone to act as
            ``langgraph`` (operator) of that tenant.
        serde: LangGraph's serializer (default: its msgpack serializer).
    """

    def __init__(
        self,
        app: Tether,
        principal: Principal | None = None,
        *,
        tenant: str | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.app = app
        self.principal = bind_principal(principal, tenant)
        self._values = ChannelValues()
        self._writer: GraphWriter | None = None
        self._commit = GroupCommit(self._write, window=WRITES_WAIT_S)

    # -- reading ---------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        stored = self.app.graphs.checkpoint(
            self.principal,
            str(conf["thread_id"]),
            conf.get("checkpoint_ns", ""),
            get_checkpoint_id(config),
        )
        return None if stored is None else self._tuple(stored)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        conf: Mapping[str, Any] = (config or {}).get("configurable", {})
        thread = conf.get("thread_id")
        found = self.app.graphs.checkpoints(
            self.principal,
            thread_id=None if thread is None else str(thread),
            checkpoint_ns=conf.get("checkpoint_ns"),
            checkpoint_id=conf.get("checkpoint_id"),
            before=get_checkpoint_id(before) if before else None,
            metadata=filter,
            limit=limit or 10_000,
        )
        for stored in found:
            yield self._tuple(stored)

    # -- writing ---------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = conf.get("checkpoint_ns", "")
        parent = conf.get("checkpoint_id")
        values = checkpoint["channel_values"]
        encoded = self._values.encode(self.serde, thread_id, ns, parent, values, new_versions)
        kept = {k: v for k, v in checkpoint.items() if k not in ("channel_values", "pending_sends")}
        raw_meta = get_serializable_checkpoint_metadata(config, metadata)
        run_id, step = raw_meta.get("run_id"), raw_meta.get("step")
        inline = encoded.inline
        write = GraphCheckpointWrite(
            checkpoint=GraphCheckpointRow(
                thread_id=thread_id,
                checkpoint_ns=ns,
                checkpoint_id=checkpoint["id"],
                parent_checkpoint_id=parent,
                checkpoint_json=_bookkeeping_json(kept),
                metadata_json=_json_text(raw_meta),
                blob_channels=encoded.blob_channels,
                inline_type=inline[0] if inline else None,
                inline_data=inline[1] if inline else None,
            ),
            blobs=encoded.rows,
            graph_run_id=None if run_id is None else str(run_id),
            step=step if type(step) is int else 0,
            next_nodes=next_nodes(values),
        )
        self._commit.submit(write, wait=False)
        if encoded.blob_channels:  # else nothing for its child to extend
            self._values.stored(
                thread_id, ns, checkpoint["id"], checkpoint["channel_versions"], encoded
            )
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        conf = config["configurable"]
        ns = conf.get("checkpoint_ns", "")
        node = task_path.rsplit(",", 1)[-1].strip()
        checkpoint_id = str(conf["checkpoint_id"])
        rows, interrupts, failure, replace = [], [], None, True
        for position, (channel, value) in enumerate(writes):
            type_, data = self.serde.dumps_typed(value)
            idx = WRITES_IDX_MAP.get(channel, position)
            replace = replace and channel in WRITES_IDX_MAP
            rows.append(GraphWriteRow(task_id, idx, channel, type_, data, task_path))
            if channel == INTERRUPT:
                interrupts += graph_interrupts(value, task_id, node, checkpoint_id)
            elif channel == ERROR and ns == "":
                failure = redact(f"{type(value).__name__}: {value}")[:500]
        task = GraphTaskWrites(
            thread_id=str(conf["thread_id"]),
            checkpoint_ns=ns,
            checkpoint_id=checkpoint_id,
            writes=rows,
            replace=replace,
            interrupts=interrupts,
            failure=failure,
            node=node,
        )
        # Interrupts and errors end the run: nothing follows to share a commit with.
        self._commit.submit(task, wait=not interrupts and failure is None)

    # -- deleting, copying, pruning --------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        self._commit.flush()
        self.app.graphs.delete_thread(self.principal, str(thread_id))
        self._values.forget([str(thread_id)])

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._commit.flush()
        self.app.graphs.delete_for_runs(self.principal, [str(r) for r in run_ids])
        self._values.forget()

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._commit.flush()
        self.app.graphs.copy_thread(self.principal, str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        threads = [str(t) for t in thread_ids]
        self._commit.flush()
        self.app.graphs.prune(self.principal, threads, strategy=strategy)
        self._values.forget(threads)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """``<counter>.<random>``: increasing, and distinct between forks of a thread, so
        two branches never store different values under one version. Short (21
        characters), since every checkpoint lists the version of every channel."""
        number = 0 if current is None else int(str(current).split(".")[0])
        return f"{number + 1:012}.{random.getrandbits(32):08x}"

    # -- async: the same, in a worker thread -----------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(
            lambda: [*self.list(config, filter=filter, before=before, limit=limit)]
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))

    # -- internals -------------------------------------------------------------------------

    def _write(self, items: Sequence[GraphWrite]) -> None:
        """Through a writer made at the first write (a saver that only reads needs no
        ``runs.start``)."""
        if self._writer is None:
            self._writer = self.app.graphs.writer(self.principal)
        self._writer.write(items)

    def _tuple(self, stored: StoredGraphCheckpoint) -> CheckpointTuple:
        row = stored.checkpoint
        data: dict[str, Any] = json.loads(row.checkpoint_json)
        data["channel_values"] = self._values.decode(
            self.serde,
            row.thread_id,
            row.checkpoint_ns,
            row.checkpoint_id,
            data.get("channel_versions", {}),
            (row.inline_type, row.inline_data or b"") if row.inline_type else None,
            stored.values,
        )
        ids = {"thread_id": row.thread_id, "checkpoint_ns": row.checkpoint_ns}
        parent = row.parent_checkpoint_id
        return CheckpointTuple(
            config={"configurable": {**ids, "checkpoint_id": row.checkpoint_id}},
            checkpoint=cast(Checkpoint, data),
            metadata=cast(CheckpointMetadata, json.loads(row.metadata_json)),
            parent_config={"configurable": {**ids, "checkpoint_id": parent}} if parent else None,
            pending_writes=[
                (w.task_id, w.channel, self.serde.loads_typed((w.type, w.data or b"")))
                for w in stored.writes
            ],
        )


def next_nodes(values: Mapping[str, Any]) -> list[str]:
    """The nodes a checkpoint still has to run, read from the trigger channels that hold a
    value (``__start__`` for a new input, ``branch:to:<node>``, pending ``Send`` tasks)."""
    nodes = {channel.removeprefix(_TRIGGER) for channel in values if channel.startswith(_TRIGGER)}
    if "__start__" in values:
        nodes.add("__start__")
    if values.get(TASKS):
        nodes.add(TASKS)
    return sorted(nodes)


def graph_interrupts(
    value: Any, task_id: str, node: str, checkpoint_id: str
) -> list[GraphInterrupt]:
    """The interrupts of an ``__interrupt__`` write, as Tether waits see them."""
    items = value if isinstance(value, list | tuple) else [value]
    found = []
    for position, item in enumerate(items):
        if isinstance(item, Interrupt):
            interrupt_id, payload = str(item.id), item.value
        else:
            interrupt_id, payload = f"{task_id}:{position}", item
        approval = isinstance(payload, Mapping) and payload.get("tether") == APPROVAL
        if approval:
            request = {k: v for k, v in _json_safe(dict(payload)).items() if k != "tether"}
        elif isinstance(payload, str):
            request = {"question": payload}
        else:
            request = {
                "question": f"{node or 'a node'} asks for input",
                "value": _json_safe(payload),
            }
        found.append(GraphInterrupt(interrupt_id, node, checkpoint_id, request, approval=approval))
    return found


def _json_safe(value: Any) -> Any:
    """``value`` as JSON Tether can store: what canonical JSON refuses becomes its text."""
    try:
        return json.loads(canonical.dumps(value))
    except InvalidInput:
        if isinstance(value, Mapping):
            return {str(k): _json_safe(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [_json_safe(v) for v in value]
        return redact(str(value))[:2000]


def _bookkeeping_json(value: Mapping[str, Any]) -> str:
    """A checkpoint's bookkeeping (its id, timestamp, channel versions and the versions
    each node saw: string keys, text and integers) as canonical JSON. orjson writes the
    same text as :func:`tether.canonical.dumps` for these, ten times faster, and this is
    the largest part of every checkpoint; anything it refuses goes the canonical way."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return canonical.dumps(value, trusted=True)


def _json_text(value: Any) -> str:
    """Checkpoint metadata as canonical JSON (LangGraph keeps only text, numbers and
    booleans of the config, under string keys); what JSON refuses is kept as its text."""
    try:
        return canonical.dumps(value, trusted=True)
    except InvalidInput:
        return canonical.dumps(_json_safe(value))
