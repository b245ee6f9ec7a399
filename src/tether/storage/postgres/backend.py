"""The PostgreSQL backend (psycopg 3 with a connection pool), for many workers.

Each tenant transaction switches to the ``tether_app`` role with ``set_config(…, true)``
(which ends with the transaction) and calls ``tether_enter(tenant, nonce, signature)``:
the signature is an HMAC of the tenant, the backend's process id and the nonce under a key
derived from the master key, and the nonce grows with every transaction of the process.
``tether_enter()`` (which alone reads the database's copy of that key) checks both and
binds the tenant to this one transaction; row-level security reads it back through
``tether_tenant()``. SQL that sets the tenant itself, or replays a signature it saw, sees
no tenant's rows.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import itertools
import math
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from importlib import resources
from typing import Any, Literal, NoReturn, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from tether.clock import to_utc
from tether.config import Settings
from tether.errors import (
    ConfigError,
    Conflict,
    DatabaseMissing,
    PermissionDenied,
    StorageError,
    StorageUnavailable,
)
from tether.keys import TENANT_CONTEXT, Keyring, hmac_pads, load_keyring
from tether.redaction import get_logger, redact, url_secrets
from tether.storage._group_commit import GroupCommit, StepOutcome
from tether.storage._langgraph_ops import LangGraphOps, checkpoint_row, graph_write_rows
from tether.storage._memory_ops import MemoryOps
from tether.storage._operations_ops import OperationsOps
from tether.storage._procedures_ops import ProceduresOps
from tether.storage._runs_ops import RunOps
from tether.storage._sqlfile import (
    compare_versions,
    latest_versions,
    load_migrations,
    load_queries,
    refuse_newer,
    require_current,
)
from tether.storage._threads_ops import ThreadOps
from tether.storage._transaction import Row
from tether.storage._webhooks_ops import WebhookOps
from tether.storage._working_ops import WorkingOps
from tether.storage.base import AppliedMigration, ComponentVersion, StepWrite
from tether.storage.postgres._graph_writes import (
    GraphWrite,
    graph_finish,
    graph_read,
    graph_start,
    graph_step,
)
from tether.storage.postgres._steps import StepFaults, commit_steps
from tether.storage.postgres._vacuum import rewrite_until_clean
from tether.storage.postgres.wakeups import PostgresWakeups
from tether.storage.rows import (
    GraphCheckpointRow,
    GraphEvent,
    GraphPut,
    GraphRunUpdate,
    GraphThreadStart,
    GraphWriteRow,
    NextEntry,
)
from tether.validation import check_params

_PACKAGE = __package__ or "tether.storage.postgres"
_T = TypeVar("_T")
log = get_logger("tether.storage")
APP_ROLE = "tether_app"
SYSTEM_ROLE = "tether_system"
_MIGRATION_LOCK = 0x7E7E_0001
_SET_CONTEXT = "SELECT set_config('role', %s, true), tether_enter(%s, %s, %s) AS entered"
_SET_SYSTEM = "SELECT set_config('role', %s, true), set_config('tether.tenant_id', %s, true)"
_NONCES = itertools.count(time.time_ns())
"""Nonces of this process: each larger than the last, so a session (which accepts only a
nonce larger than every one before) never takes a signature twice."""


def sign_tenant(key: bytes, tenant_id: str, backend_pid: int) -> tuple[int, str]:
    """A fresh nonce and the signature ``tether_enter()`` accepts once, on this backend."""
    nonce = next(_NONCES)
    message = f"{tenant_id}\x1f{backend_pid}\x1f{nonce}".encode()
    return nonce, hmac.new(key, message, hashlib.sha256).hexdigest()


TRANSIENT_SQLSTATE_CLASSES = ("08", "40", "53", "57", "58")
"""Connection lost, serialization or deadlock, disk or memory full, server shutting down or
restarting, system error: worth retrying once the server is back."""
TRANSIENT_SQLSTATES = ("25006", "55P03", "55006")
"""Read-only transaction (a standby or ``default_transaction_read_only``), lock timeout,
object in use."""


def translate_error(exc: BaseException, display_url: str, secrets: Sequence[str] = ()) -> NoReturn:
    """Re-raise a driver or pool error as Tether's own, keeping the cause.

    The driver's text passes :func:`~tether.redaction.redact` with the URL's secrets: a
    connection error must not print the password it was given.
    """
    if isinstance(exc, PoolTimeout):
        raise StorageUnavailable(
            f"no PostgreSQL connection became free in time at {display_url}; the server may "
            "be down or TETHER_PG_POOL_MAX_SIZE too small"
        ) from exc
    text = redact(str(exc), secrets).strip()
    message = text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, pg_errors.IntegrityError):
        raise Conflict(f"the change conflicts with stored data ({message})") from exc
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        raise PermissionDenied(f"the database refused the operation: {message}") from exc
    sqlstate = getattr(exc, "sqlstate", None) or ""
    transient = sqlstate in TRANSIENT_SQLSTATES or sqlstate[:2] in TRANSIENT_SQLSTATE_CLASSES
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)) or transient:
        raise StorageUnavailable(f"PostgreSQL at {display_url} is unavailable: {message}") from exc
    raise StorageError(f"PostgreSQL error at {display_url}: {message}") from exc


RUN_TABLES = ("runs", "run_checkpoints", "run_journal", "run_waits", "run_events", "run_inbox")
"""The tables ``gc`` deletes from, rewritten by :meth:`PostgresStorage.reclaim_run_space`."""


class PostgresTransaction(
    WebhookOps,
    RunOps,
    MemoryOps,
    WorkingOps,
    ThreadOps,
    ProceduresOps,
    OperationsOps,
    LangGraphOps,
):
    def __init__(
        self, conn: psycopg.Connection[dict[str, Any]], queries: Mapping[str, str]
    ) -> None:
        super().__init__(queries)
        self.connection = conn

    def _fetch(self, name: str, params: Mapping[str, Any]) -> list[Row]:
        check_params(params)
        cursor = self.connection.execute(self._queries[name], params)
        return list(cursor.fetchall()) if cursor.description else []

    def _fetch_many(self, name: str, params: Sequence[Mapping[str, Any]]) -> None:
        for one in params:
            check_params(one)
        with self.connection.cursor() as cursor:
            cursor.executemany(self._queries[name], params)

    @property
    def queries(self) -> Mapping[str, str]:
        """The named queries, for the step writer's own execution of them."""
        return self._queries

    def context_command(
        self, tenant_id: str, tenant_key: bytes
    ) -> tuple[str, tuple[str, str, int, str]]:
        """The statement that enters ``tenant_id`` for the rest of the transaction (or
        until the next one), with its parameters, freshly signed."""
        nonce, signature = sign_tenant(tenant_key, tenant_id, self.connection.info.backend_pid)
        return _SET_CONTEXT, (APP_ROLE, tenant_id, nonce, signature)

    def step_rows(self, write: StepWrite) -> list[list[dict[str, Any]]]:
        """The parameters of each of :func:`~tether.storage.postgres._steps.step_queries`
        for one step: the guarded run update, then the rows the step adds."""
        run = self._save_params(write.run)
        run.update(
            expected_version=write.expected_version,
            expected_owner=write.expected_owner,
            cancellable=write.cancellable,
        )
        checkpoint = write.checkpoint
        return [
            [run],
            [self._journal_params(e) for e in write.journal],
            [] if checkpoint is None else [self._checkpoint_params(checkpoint)],
            [self._wait_params(w) for w in write.waits],
            [self._resolution_params(w) for w in write.resolved],
            [self._event_params(e) for e in write.events],
            [self._run_params(child) for child, _, _ in write.children],
            [self._checkpoint_params(checkpoint) for _, checkpoint, _ in write.children],
            [self._event_params(event) for _, _, event in write.children],
        ]

    def _text_query(
        self, tenant_id: str, groups: Sequence[Sequence[str]], scopes: Sequence[str]
    ) -> str:
        return " | ".join("(" + " & ".join(group) + ")" for group in groups)

    def _index_text(self, text: str, context: str, scope_token: str) -> int | None:
        return None  # insert_memory fills memories.tsv; a trigger fills memory_terms

    def _unindex_text(self, row: Row) -> None:
        return None  # the tsvector goes with the row, its terms with a trigger

    def _array_in(self, values: Sequence[str]) -> list[str]:
        return list(values)

    def _ts_in(self, moment: datetime) -> datetime:
        return to_utc(moment)

    def _ts_out(self, value: Any) -> datetime:
        if not isinstance(value, datetime):
            raise StorageError(f"expected a timestamp from PostgreSQL, got {type(value).__name__}")
        return to_utc(value)


class PostgresStorage:
    """A Tether database on a PostgreSQL server."""

    backend: Literal["postgres"] = "postgres"

    def __init__(self, settings: Settings, keyring: Keyring | None = None) -> None:
        database = settings.database
        self._settings = settings
        self._keyring: Keyring | None = None
        self._tenant_key_bytes: bytes | None = None
        self._sessions: weakref.WeakSet[psycopg.Connection[dict[str, Any]]] = weakref.WeakSet()
        """Connections whose session has its nonce sequence (core 0003)."""
        self._prepared_steps: weakref.WeakSet[psycopg.Connection[dict[str, Any]]] = (
            weakref.WeakSet()
        )
        """Connections whose session holds the step statements prepared."""
        if keyring is not None:
            self.use_keys(keyring)
        self.display_url = database.display
        self._secrets = url_secrets(database.raw)
        self._conninfo = database.raw
        self._queries = load_queries(_PACKAGE, "pyformat")
        self._migrations = load_migrations(_PACKAGE)
        self._bootstrap = resources.files(_PACKAGE).joinpath("bootstrap.sql").read_text("utf-8")
        timeout = max(2, math.ceil(settings.pg_connect_timeout_s))
        self._probe(database.raw, timeout)
        self.step_commits = GroupCommit(self._commit_steps)
        self.step_faults: StepFaults | None = None
        """Called between a batch of steps' statements and its commit (tests crash there)."""
        self._pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            database.raw,
            min_size=settings.pg_pool_min_size,
            max_size=settings.pg_pool_max_size,
            kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": timeout},
            timeout=settings.pg_connect_timeout_s,
            open=False,
            name="tether",
        )
        try:
            self._pool.open(
                wait=settings.pg_pool_min_size > 0, timeout=settings.pg_connect_timeout_s
            )
        except (PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            translate_error(exc, self.display_url, self._secrets)

    def _probe(self, conninfo: str, timeout: int) -> None:
        """Connect once so a bad address or missing database fails fast and clearly."""
        try:
            psycopg.connect(conninfo, connect_timeout=timeout).close()
        except psycopg.OperationalError as exc:
            text = str(exc)
            if "does not exist" in text and "database" in text:
                raise DatabaseMissing(
                    f"PostgreSQL has no database at {self.display_url}; create it "
                    "(createdb) and run `tether migrate`"
                ) from exc
            translate_error(exc, self.display_url, self._secrets)
        except psycopg.Error as exc:
            translate_error(exc, self.display_url, self._secrets)

    def _fail(self, exc: BaseException) -> NoReturn:
        """Translate ``exc``; after a lost connection, also drop the pool's idle
        connections that died with it (after a server restart every one of them is dead,
        and each would fail its next transaction in turn)."""
        sqlstate = getattr(exc, "sqlstate", None) or ""
        if isinstance(exc, psycopg.OperationalError) and sqlstate[:2] in ("", "08", "57"):
            try:
                self._pool.check()
            except (psycopg.Error, PoolTimeout):
                log.debug("checking the pool after a lost connection failed", exc_info=True)
        translate_error(exc, self.display_url, self._secrets)

    @property
    def keyring(self) -> Keyring:
        """The keys of this process: given, else read from the settings on first use."""
        keyring = self._keyring
        if keyring is None:
            keyring = load_keyring(self._settings)
            self.use_keys(keyring)
        return keyring

    @property
    def _tenant_key(self) -> bytes:
        if self._tenant_key_bytes is None:
            self._tenant_key_bytes = self.keyring.purpose_key(TENANT_CONTEXT)
        return self._tenant_key_bytes

    def use_keys(self, keyring: Keyring) -> None:
        """Sign tenant transactions with ``keyring``'s tenant-context key from now on."""
        self._keyring = keyring
        self._tenant_key_bytes = keyring.purpose_key(TENANT_CONTEXT)

    def check_keys(self) -> None:
        """Refuse to start when the database holds another tenant-context key than ours.

        Otherwise every tenant transaction would see no rows at all, silently.
        """
        try:
            with self._begin(APP_ROLE, "", write=False) as txn:
                row = txn.connection.execute("SELECT tether_tenant() IS NOT NULL AS ok").fetchone()
        except StorageUnavailable:
            raise
        except StorageError as exc:
            raise ConfigError(
                f"cannot check the tenant-context key of {self.display_url}: {exc}"
            ) from exc
        if not row or not row["ok"]:
            raise ConfigError(
                f"the master key ({self.keyring.source}) is not the one {self.display_url} was "
                "migrated with, so no tenant's rows would be visible. Configure the key the "
                "database was migrated with, or run `tether migrate` with this key (after a "
                "rotation: stop every process still using the old key first)."
            )

    def _install_keys(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        inner, outer = hmac_pads(self._tenant_key)
        conn.execute(
            "INSERT INTO tether_secrets (purpose, inner_pad, outer_pad) VALUES (%s, %s, %s) "
            "ON CONFLICT (purpose) DO UPDATE SET inner_pad = excluded.inner_pad, "
            "outer_pad = excluded.outer_pad",
            (TENANT_CONTEXT, inner, outer),
        )

    @contextmanager
    def _begin(self, role: str, tenant_id: str, write: bool) -> Iterator[PostgresTransaction]:
        # The system role's policies ignore the tenant: it needs no signature (and
        # `migrate` reads the database before any key is installed).
        key = self._tenant_key if role == APP_ROLE else b""
        try:
            with self._pool.connection() as conn:
                if key:
                    self._start_session(conn)
                # Reads see one snapshot (an audit chain and its head, a run and its
                # checkpoints), as SQLite's read transactions do. Set on the connection,
                # the characteristics go out with BEGIN itself (no extra round trip).
                conn.isolation_level = None if write else psycopg.IsolationLevel.REPEATABLE_READ
                conn.read_only = None if write else True
                try:
                    with conn.transaction():
                        if key:
                            nonce, signature = sign_tenant(key, tenant_id, conn.info.backend_pid)
                            conn.execute(_SET_CONTEXT, (role, tenant_id, nonce, signature))
                        else:
                            conn.execute(_SET_SYSTEM, (role, tenant_id))
                        yield PostgresTransaction(conn, self._queries)
                except pg_errors.Error as exc:
                    if exc.sqlstate == "TT003":
                        conn.close()  # its nonce sequence is gone or not Tether's: replace it
                    raise
                finally:
                    if not write and not conn.closed:
                        # Back to the defaults before the pool lends it to other code.
                        conn.isolation_level = None
                        conn.read_only = None
        except (psycopg.Error, PoolTimeout) as exc:
            self._fail(exc)

    def _start_session(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Give the connection's session its nonce sequence, once (outside any
        transaction: read-only transactions may advance it but not create it). A session
        whose sequence was dropped or replaced is closed, so the pool makes a new one."""
        if conn in self._sessions:
            return
        try:
            conn.execute("SELECT tether_session_start()")
        except pg_errors.Error as exc:
            if exc.sqlstate == "TT003":
                conn.close()
            raise
        self._sessions.add(conn)

    def transaction(
        self, tenant_id: str, *, write: bool = True
    ) -> AbstractContextManager[PostgresTransaction]:
        return self._begin(APP_ROLE, tenant_id, write)

    def system_transaction(
        self, *, write: bool = True
    ) -> AbstractContextManager[PostgresTransaction]:
        return self._begin(SYSTEM_ROLE, "", write)

    def write_step(self, write: StepWrite) -> tuple[int, bool]:
        """Commit the step, with the steps other threads of this process write at the same
        moment (see :mod:`tether.storage._group_commit`); alone, in one round trip."""
        return self.step_commits.write(write)

    def _commit_steps(self, writes: Sequence[StepWrite]) -> list[StepOutcome]:
        try:
            with self._pool.connection() as conn:
                self._start_session(conn)
                txn = PostgresTransaction(conn, self._queries)
                return commit_steps(
                    txn,
                    writes,
                    self._tenant_key,
                    self._translate,
                    self._prepared_steps,
                    self.step_faults,
                )
        except (psycopg.Error, PoolTimeout) as exc:
            self._fail(exc)

    def read_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> tuple[GraphCheckpointRow, list[GraphWriteRow]] | None:
        """One round trip: a read-only transaction, the tenant context, both reads and the
        commit in one multi-statement query."""
        read = functools.partial(
            graph_read,
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint_id,
        )
        found = self._graph_call(tenant_id, read)
        return None if found is None else (checkpoint_row(found[0]), graph_write_rows(found[1]))

    def write_graph_step(self, tenant_id: str, items: Sequence[GraphPut]) -> None:
        """The statements as one multi-statement query (see :meth:`write_step`): one
        round trip, with the tenant set first."""
        self._graph_call(tenant_id, functools.partial(graph_step, items=items))

    def write_graph_start(
        self, tenant_id: str, start: GraphThreadStart, entry: NextEntry, items: Sequence[GraphPut]
    ) -> bool:
        """Two round trips: the tenant context, the thread and the locked audit head read
        in a transaction left open; then every statement and the commit."""
        write = functools.partial(graph_start, start=start, entry=entry, items=items)
        return self._graph_call(tenant_id, write)

    def write_graph_finish(
        self, tenant_id: str, update: GraphRunUpdate, event: GraphEvent, items: Sequence[GraphPut]
    ) -> bool:
        """Two round trips: the guarded update in a transaction left open; then the event,
        every statement and the commit."""
        write = functools.partial(graph_finish, update=update, event=event, items=items)
        return self._graph_call(tenant_id, write)

    def _graph_call(self, tenant_id: str, write: GraphWrite[_T]) -> _T:
        """``write`` (a short write or read) on a connection of the pool, given the
        statement that enters the tenant."""
        try:
            with self._pool.connection() as conn:
                self._start_session(conn)
                cursor = psycopg.ClientCursor(conn)
                nonce, signature = sign_tenant(self._tenant_key, tenant_id, conn.info.backend_pid)
                context = cursor.mogrify(_SET_CONTEXT, (APP_ROLE, tenant_id, nonce, signature))
                return write(cursor, context, self._queries, tenant_id)
        except (pg_errors.Error, PoolTimeout) as exc:
            self._fail(exc)

    def _translate(self, exc: BaseException) -> NoReturn:
        translate_error(exc, self.display_url, self._secrets)

    def wakeups(self) -> PostgresWakeups:
        return PostgresWakeups(
            self._conninfo,
            self._queries["listen_runs"],
            max(2, math.ceil(self._settings.pg_connect_timeout_s)),
        )

    def _applied_versions(self, conn: psycopg.Connection[dict[str, Any]]) -> dict[str, int]:
        exists = conn.execute("SELECT to_regclass('tether_schema_versions') AS t").fetchone()
        if not exists or exists["t"] is None:
            return {}
        rows = conn.execute(
            "SELECT component, MAX(version) AS v FROM tether_schema_versions GROUP BY component"
        ).fetchall()
        return {str(row["component"]): int(row["v"]) for row in rows}

    def schema_status(self) -> list[ComponentVersion]:
        try:
            with self._pool.connection() as conn:
                applied = self._applied_versions(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            translate_error(exc, self.display_url, self._secrets)
        return compare_versions(applied, latest_versions(self._migrations))

    def check_schema(self) -> None:
        require_current(self.schema_status(), self.display_url)

    def migrate(self) -> list[AppliedMigration]:
        """Apply pending migrations in one transaction, under an advisory lock."""
        applied: list[AppliedMigration] = []
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(self._bootstrap)
                versions = self._applied_versions(conn)
                refuse_newer(
                    compare_versions(versions, latest_versions(self._migrations)),
                    self.display_url,
                )
                for migration in self._migrations:
                    if migration.version <= versions.get(migration.component, 0):
                        continue
                    conn.execute(migration.sql)
                    conn.execute(
                        "INSERT INTO tether_schema_versions (component, version, name, applied_at)"
                        " VALUES (%s, %s, %s, now())",
                        (migration.component, migration.version, migration.name),
                    )
                    applied.append(
                        AppliedMigration(migration.component, migration.version, migration.name)
                    )
                self._install_keys(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            translate_error(exc, self.display_url, self._secrets)
        return applied

    def compact_after_erasure(self) -> None:
        """Rewrite the memory tables (``VACUUM FULL``) so erased rows leave no bytes in the
        heap, TOAST or index pages.

        A plain VACUUM only marks the space free; FULL rewrites each table, its TOAST
        table and its indexes. It locks the memory tables of every tenant while it runs,
        and needs the login role to own them (or be a superuser): otherwise it fails
        loudly, since the erasure would not be complete.
        """
        tables = (
            "memories",
            "memory_terms",
            "memory_vectors",
            "memory_subjects",
            "memory_decisions",
            "threads",
            "thread_turns",
            "thread_summaries",
            "working_memory",
        )
        try:
            with self._pool.connection() as conn:
                rewrite_until_clean(conn, tables)
        except pg_errors.InsufficientPrivilege as exc:
            raise PermissionDenied(
                "the erasure is committed, but this login role may not VACUUM FULL the memory "
                "tables, so erased bytes may remain in free pages until they are reused; run "
                "the erasure (or VACUUM FULL memories, memory_terms, memory_vectors, "
                "memory_subjects, memory_decisions, threads, thread_turns, thread_summaries, "
                "working_memory) as the tables' owner"
            ) from exc
        except (psycopg.Error, PoolTimeout) as exc:
            translate_error(exc, self.display_url, self._secrets)

    def reclaim_run_space(self) -> None:
        try:
            with self._pool.connection() as conn:
                for table in RUN_TABLES:
                    conn.execute(f"VACUUM (FULL, ANALYZE) {table}")
        except pg_errors.InsufficientPrivilege as exc:
            raise PermissionDenied(
                "this login role may not VACUUM FULL the run tables; run "
                f"VACUUM FULL {', '.join(RUN_TABLES)} as the tables' owner"
            ) from exc
        except (psycopg.Error, PoolTimeout) as exc:
            translate_error(exc, self.display_url, self._secrets)

    def close(self) -> None:
        self._pool.close()
