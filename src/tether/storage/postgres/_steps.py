"""Durable steps on PostgreSQL: one step in one round trip, several in one transaction.

A step alone goes as one multi-statement query of ``EXECUTE``s of statements its session
prepared once, their parameters bound client-side: PostgreSQL runs it as a single
implicit transaction (one round trip), and the guarded run update aborts the lot if the
run moved on or was cancelled. Several steps (a group commit, see
:mod:`tether.storage._group_commit`) go in one transaction and one pipeline: ``BEGIN``,
the tenant context, one prepared statement per kind of row for all the steps at once (the
checkpoints, the events, the guarded run updates last), the rows of each sent as one JSON
array, then ``COMMIT``: one round trip besides reading the guard rows, one plan per
statement and connection, one WAL flush for all the steps. Rarer rows (journal entries,
waits, child runs) go by ``executemany`` in the same pipeline. Should a guard fail
there (or a step conflict with stored data), that transaction is rolled back and written
again with each step under a savepoint of its own, so the steps that fail leave nothing
and the others commit, still once.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from collections.abc import Callable, Mapping, MutableSet, Sequence
from datetime import datetime
from typing import Any, NamedTuple, NoReturn, Protocol

import psycopg
from psycopg import errors as pg_errors

from tether.errors import InvalidInput, LeaseLost, RunCancelled, StorageError
from tether.storage._group_commit import StepOutcome
from tether.storage.rows import StepWrite
from tether.validation import check_params


class StepTransaction(Protocol):
    """What the step writer uses of ``backend.PostgresTransaction``."""

    @property
    def connection(self) -> psycopg.Connection[dict[str, Any]]: ...

    @property
    def queries(self) -> Mapping[str, str]: ...

    def context_command(
        self, tenant_id: str, tenant_key: bytes
    ) -> tuple[str, tuple[str, str, int, str]]: ...

    def step_rows(self, write: StepWrite) -> list[list[dict[str, Any]]]: ...


def step_queries(queries: Mapping[str, str]) -> tuple[str, ...]:
    """What one step writes, in order: the guarded run update, its journal entries,
    checkpoint, new waits, closed waits and events, then its child runs, their checkpoints
    and events (the rows of each: ``StepTransaction.step_rows``)."""
    return (
        queries["save_run_guarded"],
        queries["upsert_journal_entry"],
        queries["insert_checkpoint"],
        queries["insert_wait"],
        queries["resolve_wait"],
        queries["insert_event"],
        queries["insert_run"],
        queries["insert_checkpoint"],
        queries["insert_event"],
    )


StepFaults = Callable[[str, int], None]
"""``hook(point, steps)`` called at ``"before_commit"`` of a batch; tests raise to crash."""


class _Translate(Protocol):
    def __call__(self, exc: BaseException) -> NoReturn: ...


def commit_steps(
    txn: StepTransaction,
    writes: Sequence[StepWrite],
    tenant_key: bytes,
    translate: _Translate,
    prepared: MutableSet[Any],
    faults: StepFaults | None = None,
) -> list[StepOutcome]:
    """Commit ``writes`` on ``txn``'s connection (autocommit, no transaction open) and
    return each one's outcome in order. ``prepared``: the connections that hold the
    step statements prepared (see :func:`_step_script`); this one is added. A step whose
    parameters fail :func:`~tether.validation.check_params` is refused alone
    (:class:`~tether.errors.InvalidInput`, nothing sent), as on SQLite.

    Raises:
        psycopg.Error: the connection failed (or a statement failed in a way no single
            step accounts for); the outcome of every step is unknown.
    """
    steps: list[_Step] = []
    outcomes: list[StepOutcome | None] = []
    for write in writes:
        step = _checked(txn, write)
        outcomes.append(step if isinstance(step, InvalidInput) else None)
        if isinstance(step, _Step):
            steps.append(step)
    if not steps:
        return [o for o in outcomes if o is not None]
    cursor = psycopg.ClientCursor(txn.connection)
    if len(steps) == 1 and faults is None:
        written = [_commit_alone(txn, cursor, steps[0], tenant_key, translate, prepared)]
        return _merge(outcomes, written)
    order = sorted(range(len(steps)), key=lambda i: _lock_order(steps[i]))
    try:
        rows = _pipeline_batch(txn, [steps[i] for i in order], tenant_key, faults is None)
    except pg_errors.Error as exc:
        _rollback(cursor, exc)
        if _ends_connection(exc):
            raise
        written = _run_isolated(txn, cursor, steps, tenant_key, translate, prepared)
    else:
        written = list(rows)
        for position, index in enumerate(order):
            written[index] = rows[position]
        if faults is None:
            return _merge(outcomes, written)
    if faults is not None:
        faults("before_commit", len(steps))
    cursor.execute("COMMIT")
    return _merge(outcomes, written)


class _Step(NamedTuple):
    write: StepWrite
    rows: list[list[dict[str, Any]]]
    """The parameters of each of :func:`step_queries` (``StepTransaction.step_rows``)."""


def _checked(txn: StepTransaction, write: StepWrite) -> _Step | InvalidInput:
    """The step's rows, having passed the storage net every backend casts on what it
    binds (canonical JSON of untrusted values; text PostgreSQL would refuse or that
    cannot be encoded, integers beyond 64 bits); or why not. A step refused is refused
    alone, before anything is sent, with the error SQLite gives."""
    try:
        rows = txn.step_rows(write)
        for kind in rows:
            for params in kind:
                check_params(params)
    except InvalidInput as exc:
        return exc
    return _Step(write, rows)


def _merge(refused: list[StepOutcome | None], written: list[StepOutcome]) -> list[StepOutcome]:
    """Each step's outcome in order: its refusal, or the next of ``written``."""
    rest = iter(written)
    return [next(rest) if outcome is None else outcome for outcome in refused]


def _commit_alone(
    txn: StepTransaction,
    cursor: psycopg.ClientCursor[Any],
    step: _Step,
    tenant_key: bytes,
    translate: _Translate,
    prepared: MutableSet[Any],
) -> StepOutcome:
    try:
        return _execute_step(txn, cursor, step, tenant_key, prepared)
    except pg_errors.Error as exc:
        if _ends_connection(exc):
            raise
        return _step_error(exc, translate)


def _execute_step(
    txn: StepTransaction,
    cursor: psycopg.ClientCursor[Any],
    step: _Step,
    key: bytes,
    prepared: MutableSet[Any],
    savepoint: bool = False,
) -> StepOutcome:
    """Run one step's script (under a savepoint named ``step``, already made, if
    ``savepoint``); its guard row. A session that lost the prepared statements
    (``DISCARD ALL`` by other code) has them prepared again and the step run again."""
    try:
        cursor.execute(_step_script(txn, cursor, step, key, prepared))
    except pg_errors.Error as exc:
        if exc.sqlstate != _NO_SUCH_STATEMENT:
            raise
        prepared.discard(txn.connection)
        if savepoint:
            cursor.execute("ROLLBACK TO SAVEPOINT step")
        cursor.execute(_step_script(txn, cursor, step, key, prepared))
    return _guard_rows(cursor, 1)[0]


def _step_script(
    txn: StepTransaction,
    cursor: psycopg.ClientCursor[Any],
    step: _Step,
    key: bytes,
    prepared: MutableSet[Any],
) -> str:
    """The tenant context and the step's statements as one query, each an ``EXECUTE`` of
    a statement the session prepared (so the server plans it once per connection, not per
    step) with its parameters bound client-side. The first script on a connection
    prepares them first, in the same query: ``PREPARE`` is not transactional, so they
    stay prepared even when the step fails."""
    queries = step_queries(txn.queries)
    parts = []
    if txn.connection not in prepared:
        parts += [f"PREPARE {name} AS {sql}" for name, sql, _ in map(_executable, set(queries))]
        prepared.add(txn.connection)
    parts.append(cursor.mogrify(*txn.context_command(step.write.run.tenant_id, key)))
    for query, rows in zip(queries, step.rows, strict=True):
        name, _, names = _executable(query)
        call = f"EXECUTE {name}({', '.join(['%s'] * len(names))})"
        parts += [cursor.mogrify(call, [row[n] for n in names]) for row in rows]
    return ";\n".join(parts)


_NO_SUCH_STATEMENT = "26000"
"""A prepared statement this session should hold is gone: prepare again next time."""
_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")


@functools.lru_cache(maxsize=32)
def _executable(query: str) -> tuple[str, str, tuple[str, ...]]:
    """The name under which a session prepares ``query``, its text with ``$1``, ``$2``
    ... for the named parameters, and their names in that order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "%"
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    sql = _PLACEHOLDER.sub(number, query)
    digest = hashlib.sha256(query.encode()).hexdigest()[:16]
    return f"tether_step_{digest}", sql, tuple(names)


def _pipeline_batch(
    txn: StepTransaction, steps: Sequence[_Step], tenant_key: bytes, commit: bool
) -> list[StepOutcome]:
    """Every step in one pipeline: per tenant, its context, each kind of row for all its
    steps in one statement (an array per column) or one ``executemany``, and the guarded
    run updates last, whose rows are read before ``COMMIT`` goes. The guard rows, in the
    order of ``steps``. ``commit``: end with ``COMMIT`` in the same pipeline."""
    conn, queries = txn.connection, txn.queries
    found: dict[str, StepOutcome] = {}
    with conn.pipeline(), conn.cursor() as cursor:
        cursor.execute("BEGIN")
        for tenant_id, group in itertools.groupby(steps, key=lambda s: s.write.run.tenant_id):
            cursor.execute(*txn.context_command(tenant_id, tenant_key), prepare=True)
            kinds = zip(*(step.rows for step in group), strict=True)
            runs, journal, checkpoints, waits, resolved, events, *children = (
                list(itertools.chain.from_iterable(rows)) for rows in kinds
            )
            _many(cursor, queries["upsert_journal_entry"], journal)
            _arrays(cursor, queries["insert_checkpoints"], checkpoints)
            _many(cursor, queries["insert_wait"], waits)
            _many(cursor, queries["resolve_wait"], resolved)
            _arrays(cursor, queries["insert_events"], events)
            child_runs, child_checkpoints, child_events = children
            _many(cursor, queries["insert_run"], child_runs)
            _arrays(cursor, queries["insert_checkpoints"], child_checkpoints)
            _arrays(cursor, queries["insert_events"], child_events)
            _arrays(
                cursor,
                queries["save_runs_guarded"],
                runs,
                tenant_id=tenant_id,
                run_ids=[run["run_id"] for run in runs],
            )
            for row in cursor.fetchall():
                found[row["run_id"]] = (int(row["version"]), bool(row["cancel_requested"]))
        if commit:
            cursor.execute("COMMIT")
    if len(found) != len(steps):
        raise StorageError(f"the batch's run updates returned {len(found)} rows, not {len(steps)}")
    return [found[step.write.run.run_id] for step in steps]


def _many(cursor: psycopg.Cursor[Any], query: str, rows: list[dict[str, Any]]) -> None:
    if rows:
        cursor.executemany(query, rows)


def _arrays(
    cursor: psycopg.Cursor[Any], query: str, rows: list[dict[str, Any]], **params: Any
) -> None:
    """Run ``query`` once for all ``rows``, sent as one JSON array (with ``params``): one
    parameter to bind however many rows (binding each value of each row costs more here
    than the server's JSON parsing)."""
    if rows:
        text = json.dumps(rows, default=_json_value, separators=(",", ":"), ensure_ascii=False)
        cursor.execute(query, {"rows": text, **params}, prepare=True)


def _json_value(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"a step row holds a {type(value).__name__}")


def _run_isolated(
    txn: StepTransaction,
    cursor: psycopg.ClientCursor[Any],
    steps: Sequence[_Step],
    tenant_key: bytes,
    translate: _Translate,
    prepared: MutableSet[Any],
) -> list[StepOutcome]:
    """The batch again in one transaction, each step under its own savepoint (two round
    trips per step): a step that fails is rolled back alone and keeps its error."""
    outcomes: list[StepOutcome] = []
    cursor.execute("BEGIN")
    for step in steps:
        try:
            cursor.execute("SAVEPOINT step")
            outcomes.append(_execute_step(txn, cursor, step, tenant_key, prepared, True))
        except pg_errors.Error as exc:
            if _ends_connection(exc):
                raise
            cursor.execute("ROLLBACK TO SAVEPOINT step")
            outcomes.append(_step_error(exc, translate))
        cursor.execute("RELEASE SAVEPOINT step")
    return outcomes


def _guard_rows(cursor: psycopg.ClientCursor[Any], count: int) -> list[StepOutcome]:
    """The (version, cancel requested) of each guarded run update in the query's results."""
    found: list[StepOutcome] = []
    while True:
        if cursor.description is not None:
            row = cursor.fetchone()
            if row is not None and "guard" in row:
                found.append((int(row["version"]), bool(row["cancel_requested"])))
        if not cursor.nextset():
            break
    if len(found) != count:
        raise StorageError(f"the step script returned {len(found)} guard rows, not {count}")
    return found


def _step_error(exc: pg_errors.Error, translate: _Translate) -> BaseException:
    """What the caller of the step that failed raises."""
    if exc.sqlstate == "TT001":
        return LeaseLost()
    if exc.sqlstate == "TT002":
        return RunCancelled()
    try:
        translate(exc)
    except Exception as error:
        return error


def _ends_connection(exc: pg_errors.Error) -> bool:
    """Whether the connection (or the server) is gone: no step is to blame, and whether
    the batch committed is unknown."""
    sqlstate = exc.sqlstate or ""
    return not sqlstate or sqlstate[:2] == "08" or sqlstate[:3] == "57P"


def _rollback(cursor: psycopg.ClientCursor[Any], cause: pg_errors.Error) -> None:
    """End the failed transaction; if even that fails, the connection is gone."""
    try:
        cursor.execute("ROLLBACK")
    except psycopg.Error:
        raise cause from None


def _lock_order(step: _Step) -> tuple[str, str]:
    """Steps lock their run rows in one order in every batch, so two batches never wait
    on each other in a cycle (and a tenant's steps share its context)."""
    return step.write.run.tenant_id, step.write.run.run_id
