"""``TetherStore``: LangGraph's key-value store on Tether's governed memory, for one tenant.

Every item is a memory in the scope its namespace names: ``("user", "<user id>", ...)``,
``("case", "<case id>", ...)``, ``("conversation", "<id>", ...)``, ``("run", "<id>", ...)``
or ``("tenant", ...)``; give ``scopes=`` to map other namespaces. Writes pass the memory
write policy (a refused one raises :class:`~tether.errors.MemoryWriteRefused` naming the
rules), searches with a query are memory's hybrid recall with the default embedder, and
items can have a time to live. ``policy=False`` opts the store out of the write policy
(with a reason, recorded in the audit trail): its items are kept apart from governed
memory. See :mod:`tether.graph_store`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path

from tether.integrations.langgraph.checkpointer import bind_principal
from tether.memory.models import MemoryKind, Scope, SourceType
from tether.principals import Principal

if TYPE_CHECKING:
    from tether.app import Tether
    from tether.graph_store import StoreItem

ScopeOf = Callable[[tuple[str, ...]], tuple[Scope | str, str]]
"""Maps a namespace to the memory scope and scope id its items are written to."""
SCOPED = frozenset({Scope.USER, Scope.CASE, Scope.CONVERSATION, Scope.RUN})


def scope_of_namespace(tenant_id: str) -> ScopeOf:
    """The default mapping: the first label names the scope, the second its id
    (``("tenant", ...)`` is the tenant's own scope)."""

    def scope_of(namespace: tuple[str, ...]) -> tuple[Scope | str, str]:
        head = namespace[0] if namespace else ""
        if head == Scope.TENANT.value:
            return Scope.TENANT, tenant_id
        if head in SCOPED and len(namespace) >= 2:
            return Scope(head), namespace[1]
        raise InvalidNamespaceError(
            f"namespace {namespace} names no memory scope: start it with user, case, "
            "conversation or run and the id (e.g. ('user', '<user id>', 'preferences')), "
            "or with tenant; or give TetherStore(scopes=...) a mapping of your own"
        )

    return scope_of


class TetherStore(BaseStore):
    """A LangGraph store whose items are governed memories of one tenant.

    Args:
        app: the open Tether application.
        principal: who writes and reads (``memory.propose``, ``memory.read``,
            ``memory.forget``); or give ``tenant`` alone to act as ``langgraph``
            (operator) of that tenant.
        policy: ``False`` opts out of the memory write policy; ``opt_out_reason`` is then
            required and recorded in the audit trail.
        scopes: maps a namespace to (scope, scope id); the default reads its first labels.
        index: LangGraph's index configuration; only ``fields`` is read (the indexed
            text: recalled with the memory, or embedded for an opted-out store). Search
            uses the application's embedder (the default one unless configured off).
        ttl: LangGraph's TTL configuration (``default_ttl`` in minutes, ``refresh_on_read``).
        kind, source_type: what the memories written are, for the policy's rules.
    """

    supports_ttl = True

    def __init__(
        self,
        app: Tether,
        principal: Principal | None = None,
        *,
        tenant: str | None = None,
        policy: bool = True,
        opt_out_reason: str | None = None,
        scopes: ScopeOf | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        kind: MemoryKind = MemoryKind.FACT,
        source_type: SourceType = SourceType.MODEL_INFERENCE,
    ) -> None:
        self.app = app
        self.principal = bind_principal(principal, tenant)
        self.policy = policy
        self.scope_of = scopes or scope_of_namespace(self.principal.tenant_id)
        self.index_fields: list[str] = list((index or {}).get("fields") or ["$"])
        self.ttl_config = ttl
        self.kind = kind
        self.source_type = source_type
        if not policy:
            app.graph_store.opt_out(self.principal, opt_out_reason or "")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            results.append(self._run(op))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        return await asyncio.to_thread(self.batch, listed)

    def sweep_ttl(self) -> int:
        """Delete the items whose time to live ran out; how many."""
        return self.app.graph_store.sweep(self.principal)

    # -- internals -------------------------------------------------------------------------

    def _run(self, op: Op) -> Result:
        store = self.app.graph_store
        if isinstance(op, GetOp):
            found = store.get(
                self.principal, op.namespace, op.key, refresh_ttl=self._refresh(op.refresh_ttl)
            )
            return None if found is None else _item(found)
        if isinstance(op, SearchOp):
            items = store.search(
                self.principal,
                op.namespace_prefix,
                query=op.query,
                filter=op.filter,
                limit=op.limit,
                offset=op.offset,
                refresh_ttl=self._refresh(op.refresh_ttl),
            )
            return [_search_item(item) for item in items]
        if isinstance(op, ListNamespacesOp):
            prefix: Sequence[str] = ()
            suffix: Sequence[str] = ()
            for condition in op.match_conditions or ():
                if condition.match_type == "prefix":
                    prefix = condition.path
                else:
                    suffix = condition.path
            return store.namespaces(
                self.principal,
                prefix=prefix,
                suffix=suffix,
                max_depth=op.max_depth,
                limit=op.limit,
                offset=op.offset,
            )
        self._put(op)
        return None

    def _put(self, op: PutOp) -> None:
        store = self.app.graph_store
        if op.value is None:
            store.delete(self.principal, op.namespace, op.key)
            return
        value = dict(op.value)
        fields = self.index_fields if op.index is None else op.index or []
        texts = [text for field in fields for text in get_text_at_path(value, field)]
        scope, scope_id = self.scope_of(op.namespace) if self.policy else (None, None)
        store.put(
            self.principal,
            op.namespace,
            op.key,
            value,
            scope=scope,
            scope_id=scope_id,
            ttl_minutes=op.ttl,
            index_text="\n".join(texts) if texts else None,
            governed=self.policy,
            kind=self.kind,
            source_type=self.source_type,
        )

    def _refresh(self, asked: bool | None) -> bool:
        if asked is not None:
            return asked
        return bool((self.ttl_config or {}).get("refresh_on_read", True))


def _item(found: StoreItem) -> Item:
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _search_item(found: StoreItem) -> SearchItem:
    return SearchItem(
        namespace=found.namespace,
        key=found.key,
        value=found.value,
        created_at=found.created_at,
        updated_at=found.updated_at,
        score=found.score,
    )
