"""LangGraph's short writes on PostgreSQL: each statement bound client-side and sent with
the others as one multi-statement query (see :mod:`tether.storage._graph_writes`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg import pq

from tether.clock import to_utc
from tether.errors import UnknownTenant
from tether.storage._graph_writes import (
    Statements,
    checked_statements,
    graph_start_statements,
    graph_statements,
)
from tether.storage.rows import GraphPut, GraphThreadStart, NextEntry

T_co = TypeVar("T_co", covariant=True)


class GraphWrite(Protocol[T_co]):
    """A write given a cursor, the statement that enters the tenant, the named queries
    and the tenant."""

    def __call__(
        self,
        cursor: psycopg.ClientCursor[Any],
        context: str,
        queries: Mapping[str, str],
        tenant_id: str,
    ) -> T_co: ...


def graph_step(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    queries: Mapping[str, str],
    tenant_id: str,
    *,
    items: Sequence[GraphPut],
) -> None:
    """A step of a running graph: one round trip."""
    statements = checked_statements(graph_statements(queries, tenant_id, items))
    cursor.execute(";\n".join([context, *_bound(cursor, statements)]))


def graph_start(
    cursor: psycopg.ClientCursor[Any],
    context: str,
    queries: Mapping[str, str],
    tenant_id: str,
    *,
    start: GraphThreadStart,
    entry: NextEntry,
    items: Sequence[GraphPut],
) -> bool:
    """A new thread's first write: the thread and the locked audit head read in a
    transaction left open, then every statement and the commit (two round trips)."""
    ids = {"tenant_id": tenant_id, "thread_id": start.thread_id}
    reads = [
        "BEGIN",
        context,
        cursor.mogrify(_statement(queries["get_graph_thread"]), ids),
        cursor.mogrify(_statement(queries["lock_audit_head"]), ids),
    ]
    try:
        cursor.execute(";\n".join(reads))
        cursor.nextset()  # past BEGIN
        cursor.nextset()  # past the tenant context
        exists = cursor.fetchone() is not None
        cursor.nextset()
        head = cursor.fetchone()
        if exists or head is None:
            cursor.execute("ROLLBACK")
            if head is None:
                raise UnknownTenant(f"tenant {tenant_id!r} does not exist")
            return False
        made = entry(int(head["audit_seq"]), head["audit_head"])
        statements = graph_start_statements(queries, tenant_id, start, made, to_utc)
        statements += graph_statements(queries, tenant_id, items)
        cursor.execute(";\n".join([*_bound(cursor, checked_statements(statements)), "COMMIT"]))
    except BaseException:
        if cursor.connection.info.transaction_status != pq.TransactionStatus.IDLE:
            with suppress(psycopg.Error):
                cursor.execute("ROLLBACK")
        raise
    return True


def _bound(cursor: psycopg.ClientCursor[Any], statements: Statements) -> list[str]:
    return [cursor.mogrify(_statement(sql), params) for sql, rows in statements for params in rows]


def _statement(sql: str) -> str:
    """A named query without its closing semicolon, to join with others into one."""
    return sql.rstrip().rstrip(";")
