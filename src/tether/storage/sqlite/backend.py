"""The embedded SQLite backend (standard library ``sqlite3``).

WAL mode, ``busy_timeout``, ``BEGIN IMMEDIATE`` for writes, foreign keys on. A thread
holds a connection of its own while a transaction is open, so the object can be shared
across threads; SQLite serialises the writers. Between transactions the connection goes
back to a small pool, so a caller that runs each call on a new thread (LangGraph's
executors do) reuses connections instead of opening one per thread.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NoReturn

from tether import canonical
from tether.clock import SystemClock, format_timestamp, parse_timestamp
from tether.config import Settings
from tether.errors import (
    Conflict,
    DatabaseMissing,
    InvalidInput,
    LeaseLost,
    RunCancelled,
    StorageError,
    StorageUnavailable,
)
from tether.keys import Keyring
from tether.redaction import redact
from tether.storage._graph_writes import (
    StatementsTxn,
    finish_statements_txn,
    start_statements_txn,
    step_statements_txn,
)
from tether.storage._group_commit import GroupCommit, StepOutcome
from tether.storage._langgraph_ops import LangGraphOps, checkpoint_row, graph_write_rows
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
    split_statements,
)
from tether.storage._threads_ops import ThreadOps
from tether.storage._transaction import Row
from tether.storage._webhooks_ops import WebhookOps
from tether.storage._working_ops import WorkingOps
from tether.storage.base import AppliedMigration, ComponentVersion, StepWrite
from tether.storage.rows import (
    GraphCheckpointRow,
    GraphEvent,
    GraphPut,
    GraphRunUpdate,
    GraphThreadStart,
    GraphWriteRow,
    NextEntry,
)
from tether.storage.sqlite._text_index import TextIndexOps, scoped_terms_sql
from tether.storage.sqlite.wakeups import SQLiteWakeups
from tether.storage.sqlite.writers import writer_lock
from tether.validation import check_params

_PACKAGE = __package__ or "tether.storage.sqlite"

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS tether_schema_versions (
    component  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (component, version)
) WITHOUT ROWID
"""


def is_lock_error(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is another writer holding the lock past ``busy_timeout``."""
    lowered = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in lowered or "busy" in lowered)


def translate_error(exc: sqlite3.Error, path: Path) -> NoReturn:
    """Re-raise a driver error as Tether's own, keeping the cause."""
    message = redact(str(exc))
    if isinstance(exc, sqlite3.IntegrityError):
        raise Conflict(f"the change conflicts with stored data ({message})") from exc
    if isinstance(exc, sqlite3.OperationalError):
        lowered = message.lower()
        if "locked" in lowered or "busy" in lowered:
            raise StorageUnavailable(
                f"the SQLite database {path} stayed locked by another writer past "
                "busy_timeout; retry, or raise TETHER_SQLITE_BUSY_TIMEOUT_MS"
            ) from exc
        if any(word in lowered for word in ("unable to open", "readonly", "disk")):
            raise StorageUnavailable(f"cannot use the SQLite file {path}: {message}") from exc
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in message.lower():
        raise StorageUnavailable(f"{path} is not a SQLite database") from exc
    raise StorageError(f"SQLite error on {path}: {message}") from exc


class SQLiteTransaction(
    WebhookOps,
    RunOps,
    TextIndexOps,
    WorkingOps,
    ThreadOps,
    ProceduresOps,
    OperationsOps,
    LangGraphOps,
):
    def __init__(self, conn: sqlite3.Connection, queries: Mapping[str, str]) -> None:
        super().__init__(queries)
        self.connection = conn

    def _fetch(self, name: str, params: Mapping[str, Any]) -> list[Row]:
        check_params(params)
        cursor = self.connection.execute(
            self._queries[name], params if type(params) is dict else dict(params)
        )
        return cursor.fetchall()

    def _fetch_many(self, name: str, params: Sequence[Mapping[str, Any]]) -> None:
        for one in params:
            check_params(one)
        self.connection.executemany(self._queries[name], [dict(p) for p in params])

    def _array_in(self, values: Sequence[str]) -> str:
        return canonical.dumps(list(values))

    def _ts_in(self, moment: datetime) -> str:
        return format_timestamp(moment)

    def _ts_out(self, value: Any) -> datetime:
        return parse_timestamp(str(value))


IDLE_CONNECTIONS = 8
"""Most connections kept open between transactions."""


class SQLiteStorage:
    """A Tether database in one SQLite file."""

    backend: Literal["sqlite"] = "sqlite"

    def __init__(self, settings: Settings, *, create: bool = False) -> None:
        database = settings.database
        if database.sqlite_path is None:
            raise InvalidInput(f"{database.display} is not a SQLite URL")
        self.path = database.sqlite_path
        self.display_url = database.display
        self._settings = settings
        self._queries = load_queries(_PACKAGE, "named")
        self._migrations = load_migrations(_PACKAGE)
        if not self.path.exists():
            if not create:
                raise DatabaseMissing(
                    f"no database at {self.display_url}; create it with `tether migrate` "
                    "or point TETHER_URL at an existing one"
                )
            if not self.path.parent.exists():
                raise InvalidInput(
                    f"cannot create {self.path}: folder {self.path.parent} does not exist"
                )
        self._local = threading.local()
        self._lock = threading.Lock()
        self._writers = writer_lock(self.path)
        self._busy_seconds = settings.sqlite_busy_timeout_ms / 1000
        self._connections: list[sqlite3.Connection] = []
        self._idle: list[sqlite3.Connection] = []
        self._closed = False
        self.step_commits = GroupCommit(self._commit_steps)
        self.step_faults: Callable[[str, int], None] | None = None
        """Called between a batch of steps' statements and its commit (tests crash there)."""
        self._connection()

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection: the one it holds, an idle one, or a new one."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise StorageError("this storage was closed; open a new one")
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is not None:
            self._local.conn = conn
            return conn
        try:
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=self._settings.sqlite_busy_timeout_ms / 1000,
            )
            conn.row_factory = sqlite3.Row
            # The memory migration that rebuilds the full-text index calls it.
            conn.create_function("tether_scoped_terms", 3, scoped_terms_sql, deterministic=True)
            conn.execute(f"PRAGMA busy_timeout = {int(self._settings.sqlite_busy_timeout_ms)}")
            self._enable_wal(conn)
            conn.execute(f"PRAGMA synchronous = {self._settings.sqlite_synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
            # Freed pages are zeroed, so erased memories leave no bytes behind.
            conn.execute("PRAGMA secure_delete = ON")
        except sqlite3.Error as exc:
            translate_error(exc, self.path)
        with self._lock:
            self._connections.append(conn)
        self._local.conn = conn
        return conn

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch to WAL, waiting out another writer as ``busy_timeout`` promises.

        SQLite answers "database is locked" at once (without waiting for the busy
        timeout) when it cannot change the journal mode, so this retries until the
        timeout is really spent.
        """
        deadline = time.monotonic() + self._settings.sqlite_busy_timeout_ms / 1000
        delay = 0.005
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise StorageUnavailable(f"cannot put {self.path} in WAL mode (got {mode})")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)

    def _release_connection(self) -> None:
        """Hand this thread's connection back to the pool once no transaction is open on
        it (at most :data:`IDLE_CONNECTIONS` wait there; the others are closed)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or conn.in_transaction:
            return
        self._local.conn = None
        with self._lock:
            if not self._closed and len(self._idle) < IDLE_CONNECTIONS:
                self._idle.append(conn)
                return
            if conn in self._connections:
                self._connections.remove(conn)
        with suppress(sqlite3.Error):
            conn.close()

    def _discard_connection(self) -> None:
        """Forget this thread's connection after a fault, so the next transaction opens a
        fresh one (a connection opened while the file was read-only stays read-only)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is None:
            return
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        with suppress(sqlite3.Error):
            conn.close()

    def _roll_back(self, conn: sqlite3.Connection) -> None:
        """Roll back what is open on ``conn``; a connection that cannot is dropped."""
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            self._discard_connection()

    def _fail(self, conn: sqlite3.Connection, exc: sqlite3.Error) -> NoReturn:
        """Roll back what is open, translate ``exc``, and drop the connection unless the
        fault was only another writer's lock."""
        self._roll_back(conn)
        try:
            translate_error(exc, self.path)
        except StorageUnavailable:
            if not is_lock_error(exc):
                self._discard_connection()
            raise

    def _begin(self, write: bool) -> _Transaction:
        return _Transaction(self, write)

    def transaction(
        self, tenant_id: str, *, write: bool = True
    ) -> AbstractContextManager[SQLiteTransaction]:
        return self._begin(write)

    def system_transaction(
        self, *, write: bool = True
    ) -> AbstractContextManager[SQLiteTransaction]:
        return self._begin(write)

    def use_keys(self, keyring: Keyring) -> None:
        return None  # one file, no roles: nothing to sign per transaction

    def check_keys(self) -> None:
        return None

    def write_step(self, write: StepWrite) -> tuple[int, bool]:
        """Commit the step, with the steps other threads of this process write at the same
        moment (see :mod:`tether.storage._group_commit`): one FULL sync for all of them."""
        return self.step_commits.write(write)

    def _commit_steps(self, writes: Sequence[StepWrite]) -> list[StepOutcome]:
        """One transaction; several steps each under a savepoint, so a step whose guard
        fails (or that conflicts with stored data, or binds a value the storage net
        refuses) is rolled back alone."""
        if len(writes) == 1 and self.step_faults is None:
            try:
                with self._begin(True) as txn:
                    return [txn.write_step_txn(writes[0])]
            except (LeaseLost, RunCancelled, Conflict, InvalidInput) as exc:
                return [exc]
        with self._begin(True) as txn:
            outcomes = [_isolated_step(txn, write, self.path) for write in writes]
            if self.step_faults is not None:
                self.step_faults("before_commit", len(writes))
            return outcomes

    def read_graph_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> tuple[GraphCheckpointRow, list[GraphWriteRow]] | None:
        """One statement, outside a transaction (see ``read_latest_graph_checkpoint``)."""
        params = {"tenant_id": tenant_id, "thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        if checkpoint_id is None:
            sql = self._queries["read_latest_graph_checkpoint"]
        else:
            sql = self._queries["read_graph_checkpoint"]
            params["checkpoint_id"] = checkpoint_id
        check_params(params)
        conn = self._connection()
        try:
            rows = conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            self._fail(conn, exc)
        finally:
            self._release_connection()
        if not rows:
            return None
        writes = graph_write_rows([row for row in rows if row["task_id"] is not None])
        return checkpoint_row(rows[0]), writes

    def write_graph_step(self, tenant_id: str, items: Sequence[GraphPut]) -> None:
        self._graph_write(step_statements_txn, tenant_id, items=items)

    def write_graph_start(
        self, tenant_id: str, start: GraphThreadStart, entry: NextEntry, items: Sequence[GraphPut]
    ) -> bool:
        return self._graph_write(start_statements_txn, tenant_id, start, entry, items=items)

    def write_graph_finish(
        self, tenant_id: str, update: GraphRunUpdate, event: GraphEvent, items: Sequence[GraphPut]
    ) -> bool:
        return self._graph_write(finish_statements_txn, tenant_id, update, event, items=items)

    def _graph_write(self, build: StatementsTxn, tenant_id: str, *args: Any, items: Any) -> bool:
        """One transaction: the statements ``build`` makes (``None``: nothing to write)."""
        with self._begin(True) as txn:
            statements = build(txn, self._queries, format_timestamp, tenant_id, *args, items)
            for sql, rows in statements or ():
                txn.connection.executemany(sql, rows)
        return statements is not None

    def wakeups(self) -> SQLiteWakeups:
        return SQLiteWakeups(self.path, self._queries["data_version"])

    def _applied_versions(self, conn: sqlite3.Connection) -> dict[str, int]:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tether_schema_versions'"
        ).fetchone()
        if not exists:
            return {}
        rows = conn.execute(
            "SELECT component, MAX(version) FROM tether_schema_versions GROUP BY component"
        ).fetchall()
        return {str(row[0]): int(row[1]) for row in rows}

    def schema_status(self) -> list[ComponentVersion]:
        try:
            applied = self._applied_versions(self._connection())
        except sqlite3.Error as exc:
            translate_error(exc, self.path)
        return compare_versions(applied, latest_versions(self._migrations))

    def check_schema(self) -> None:
        require_current(self.schema_status(), self.display_url)

    def migrate(self) -> list[AppliedMigration]:
        """Apply pending migrations in one ``BEGIN IMMEDIATE`` transaction.

        SQLite's DDL is transactional, so concurrent migrators serialise on the write lock
        and the second finds nothing left to do.
        """
        conn = self._connection()
        applied: list[AppliedMigration] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(_VERSION_TABLE)
                versions = self._applied_versions(conn)
                refuse_newer(
                    compare_versions(versions, latest_versions(self._migrations)),
                    self.display_url,
                )
                stamp = format_timestamp(SystemClock().now())
                for migration in self._migrations:
                    if migration.version <= versions.get(migration.component, 0):
                        continue
                    for statement in split_statements(migration.sql):
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO tether_schema_versions (component, version, name, applied_at)"
                        " VALUES (?, ?, ?, ?)",
                        (migration.component, migration.version, migration.name, stamp),
                    )
                    applied.append(
                        AppliedMigration(migration.component, migration.version, migration.name)
                    )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            translate_error(exc, self.path)
        return applied

    def compact_after_erasure(self) -> None:
        """Rewrite the full-text index and truncate the WAL, so erased text is gone from
        the files as well as from the tables."""
        conn = self._connection()
        try:
            conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
            deadline = time.monotonic() + max(5.0, self._settings.sqlite_busy_timeout_ms / 1000)
            while True:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if not busy:
                    return
                if time.monotonic() >= deadline:
                    raise StorageUnavailable(
                        f"the erasure is committed but a reader of {self.path} kept the WAL "
                        "busy; the erased text stays in the -wal file until the next "
                        "checkpoint: stop long readers and run the erasure again"
                    )
                time.sleep(0.05)
        except sqlite3.Error as exc:
            translate_error(exc, self.path)

    def reclaim_run_space(self) -> None:
        conn = self._connection()
        try:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            translate_error(exc, self.path)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
            self._idle = []
        for conn in connections:
            conn.close()


def _isolated_step(txn: SQLiteTransaction, write: StepWrite, path: Path) -> StepOutcome:
    """Write one step of a batch under a savepoint; its outcome."""
    conn = txn.connection
    conn.execute("SAVEPOINT step")
    try:
        outcome: StepOutcome = txn.write_step_txn(write)
    except (LeaseLost, RunCancelled, InvalidInput) as exc:
        conn.execute("ROLLBACK TO SAVEPOINT step")
        outcome = exc
    except sqlite3.IntegrityError as exc:
        conn.execute("ROLLBACK TO SAVEPOINT step")
        try:
            translate_error(exc, path)
        except Conflict as conflict:
            outcome = conflict
    conn.execute("RELEASE SAVEPOINT step")
    return outcome


class _Transaction:
    """One transaction on this thread's connection: a class rather than a generator, as
    one is opened at every step of every run. Commits when the block ends without an
    error; a driver error is rolled back and translated (:meth:`SQLiteStorage._fail`),
    any other rolled back and left to propagate."""

    __slots__ = ("_conn", "_storage", "_turn", "_write")

    def __init__(self, storage: SQLiteStorage, write: bool) -> None:
        self._storage = storage
        self._write = write
        self._turn: threading.Lock | None = None

    def __enter__(self) -> SQLiteTransaction:
        storage = self._storage
        conn = self._conn = storage._connection()
        if conn.in_transaction:
            raise StorageError(
                "a transaction is already open on this thread; finish it before opening another"
            )
        if self._write:
            self._take_turn()
        try:
            conn.execute("BEGIN IMMEDIATE" if self._write else "BEGIN")
        except sqlite3.Error as exc:
            try:
                storage._fail(conn, exc)
            finally:
                self._end_turn()
                storage._release_connection()
        return SQLiteTransaction(conn, storage._queries)

    def _take_turn(self) -> None:
        """Wait for this process's writer before this one on the file (see
        :mod:`tether.storage.sqlite.writers`), as long as ``busy_timeout`` allows."""
        storage = self._storage
        if not storage._writers.acquire(timeout=storage._busy_seconds):
            storage._release_connection()
            raise StorageUnavailable(
                f"the SQLite database {storage.path} stayed locked by another writer of this "
                "process past busy_timeout; retry, or raise TETHER_SQLITE_BUSY_TIMEOUT_MS"
            )
        self._turn = storage._writers

    def _end_turn(self) -> None:
        turn, self._turn = self._turn, None
        if turn is not None:
            turn.release()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        storage, conn = self._storage, self._conn
        try:
            if error is None:
                try:
                    conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    storage._fail(conn, exc)
            elif isinstance(error, sqlite3.Error):
                storage._fail(conn, error)
            else:
                storage._roll_back(conn)
        finally:
            self._end_turn()
            storage._release_connection()
