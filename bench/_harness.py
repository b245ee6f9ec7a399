"""Timing, statistics and statement counting shared by the benchmarks.

Contenders are timed round-robin in chunks (every contender does ``chunk`` runs, then the
next one), so slow drift of a shared machine lands on all of them alike and the ratios
taken from one invocation hold even when absolute times do not.
"""

from __future__ import annotations

import collections
import math
import os
import platform
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from tether.config import Settings, load_settings

WRITE_VERBS = ("INSERT", "UPDATE", "DELETE", "REPLACE")

BENCH_KEY = os.environ.get("TETHER_SECRET_KEY") or secrets.token_hex(32)
"""One master key per benchmark process: PostgreSQL refuses to open without one, and a
scratch database needs no key file left behind."""


def bench_settings(url: str, **overrides: Any) -> Settings:
    """Settings for a scratch benchmark database at ``url``, with the process's key."""
    return load_settings(url=url, secret_key=BENCH_KEY, **overrides)


@dataclass
class Contender:
    """One system in one configuration: ``run(steps)`` does one whole run of the workload."""

    key: str
    system: str
    config: str
    run: Callable[[int], None]
    baseline: str | None = None
    """Key of the contender timed "without persistence" for this one."""
    compare_to: str | None = None
    """Key of the Tether contender this peer is compared with."""
    counts: Callable[[], dict[str, Any]] | None = None
    """Counts commits or round trips of this contender's runs (after timing, untimed)."""
    samples: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples)


def unavailable(key: str, system: str, config: str, reason: str) -> Contender:
    """A row that says why a contender could not run, instead of failing the bench."""

    def refuse(steps: int) -> None:
        raise RuntimeError(reason)

    return Contender(key, system, config, refuse, error=reason)


def measure(
    contenders: list[Contender],
    *,
    runs: int,
    warmup: int,
    chunk: int,
    steps: int,
    log: Callable[[str], None],
) -> None:
    """Time ``runs`` runs of every contender after ``warmup`` untimed ones, interleaved."""
    live = [c for c in contenders if c.error is None]
    for contender in live:
        _guard(contender, lambda c=contender: [c.run(steps) for _ in range(warmup)])
    done = 0
    while done < runs:
        batch = min(chunk, runs - done)
        for contender in live:
            if contender.error is None:
                _guard(contender, lambda c=contender, n=batch: _timed(c, n, steps))
        done += batch
        log(f"  timed {done}/{runs} runs of each contender")


def _timed(contender: Contender, count: int, steps: int) -> None:
    for _ in range(count):
        started = time.perf_counter()
        contender.run(steps)
        contender.samples.append(time.perf_counter() - started)


def _guard(contender: Contender, body: Callable[[], object]) -> None:
    try:
        body()
    except Exception as exc:
        contender.error = f"failed while running: {type(exc).__name__}: {exc}"[:300]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p95_ms(samples: list[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] * 1000


# -- SQLite: statements and commits ---------------------------------------------------


@dataclass
class SqliteCount:
    statements: int = 0
    commits: int = 0
    write_commits: int = 0
    transactions: list[list[str]] = field(default_factory=list)


class SqliteStatements:
    """Counts statements and write commits on the ``sqlite3`` connections given to it.

    A write commit is a ``COMMIT`` ending a transaction that ran an INSERT, UPDATE, DELETE
    or REPLACE: the commits that append to the WAL (and, at ``synchronous=FULL``, fsync
    it). Read transactions' commits are counted apart. Tracing starts with the first
    :meth:`counting`, after every contender was timed.
    """

    def __init__(self) -> None:
        self._connections: list[sqlite3.Connection] = []
        self._traced: set[int] = set()
        self._pending: list[list[str]] = []
        self._count: SqliteCount | None = None

    def attach(self, conn: sqlite3.Connection) -> None:
        self._connections.append(conn)
        if self._count is not None:
            self._trace(conn)

    def _trace(self, conn: sqlite3.Connection) -> None:
        """Trace ``conn`` from now on; the callback counts only inside :meth:`counting`.

        A callback is set once and never cleared: setting or clearing one waits for the
        connection's mutex while holding the interpreter lock, which deadlocks against a
        peer's background thread that holds that mutex while its callback waits for the
        interpreter lock. Connections are traced only once counting starts, after every
        contender was timed."""
        if id(conn) not in self._traced:
            self._traced.add(id(conn))
            conn.set_trace_callback(self._callback())

    @contextmanager
    def patch_connect(self) -> Iterator[None]:
        """Attach every connection ``sqlite3.connect`` opens inside the block."""
        real = sqlite3.connect

        def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = real(*args, **kwargs)
            self.attach(conn)
            return conn

        sqlite3.connect = connect  # type: ignore[assignment]
        try:
            yield
        finally:
            sqlite3.connect = real

    @contextmanager
    def counting(self) -> Iterator[SqliteCount]:
        for current in self._pending:
            current.clear()
        self._count = SqliteCount()
        for conn in self._connections:
            self._trace(conn)
        try:
            yield self._count
        finally:
            self._count = None

    def _callback(self) -> Callable[[str], None]:
        current: list[str] = []
        self._pending.append(current)

        def trace(statement: str) -> None:
            count = self._count
            text = _strip_comments(statement)
            if count is None or not text:
                return
            count.statements += 1
            current.append(label(text))
            verb = text.split(" ", 1)[0].upper()
            if verb in ("COMMIT", "END", "ROLLBACK"):
                wrote = any(s.split(" ", 1)[0].upper() in WRITE_VERBS for s in current)
                if verb != "ROLLBACK":
                    count.commits += 1
                    count.write_commits += wrote
                if wrote:
                    count.transactions.append(list(current))
                current.clear()

        return trace


def _strip_comments(statement: str) -> str:
    """The statement on one line, without its leading ``--`` comment lines (named queries
    carry their documentation; statements run by triggers are traced as comments only)."""
    lines = statement.strip().splitlines()
    while lines and lines[0].lstrip().startswith("--"):
        lines.pop(0)
    return " ".join(" ".join(lines).split())


def label(statement: str, words: int = 3) -> str:
    """The first few words of a statement: enough to tell the statements of a step apart."""
    return " ".join(statement.replace("(", " (").split()[:words])


# -- PostgreSQL: round trips ----------------------------------------------------------


@dataclass
class RoundTrips:
    round_trips: int = 0
    transactions: int = 0
    """Transactions ended: the server reported itself idle (``ReadyForQuery I``)."""
    labels: list[str] = field(default_factory=list)


class PgRoundTrips:
    """Counts client-server round trips on psycopg connections with libpq's own trace.

    libpq logs every protocol message it sends (``F``) and receives (``B``); a round trip
    is a run of sent messages followed by the server's answer, so a pipelined batch counts
    once. Prepared statements are named back to their SQL from the ``Parse`` messages
    seen since the connection opened, which is why tracing starts at connect.
    """

    def __init__(self) -> None:
        self._traces: list[tuple[Any, Any]] = []
        self._dir = tempfile.TemporaryDirectory(prefix="tether-bench-pgtrace-")

    @contextmanager
    def patch_connect(self) -> Iterator[None]:
        """Trace every ``psycopg.Connection`` opened inside the block (pools included)."""
        import psycopg

        original = psycopg.Connection.__dict__["connect"]

        def connect(cls: Any, *args: Any, **kwargs: Any) -> Any:
            conn = original.__func__(cls, *args, **kwargs)
            self._start(conn)
            return conn

        psycopg.Connection.connect = classmethod(connect)  # type: ignore[assignment,method-assign]
        try:
            yield
        finally:
            psycopg.Connection.connect = original  # type: ignore[method-assign]

    def _start(self, conn: Any) -> None:
        from psycopg import pq

        handle = open(  # noqa: SIM115 - kept open for libpq until close()
            os.path.join(self._dir.name, f"conn{len(self._traces)}.trace"), "a+"
        )
        conn.pgconn.trace(handle.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        self._traces.append((conn, handle))

    def _flush(self) -> list[int]:
        sizes = []
        for conn, handle in self._traces:
            if not conn.closed:
                conn.pgconn.untrace()
            sizes.append(os.path.getsize(handle.name))
        return sizes

    def _resume(self) -> None:
        from psycopg import pq

        for conn, handle in self._traces:
            if not conn.closed:
                conn.pgconn.trace(handle.fileno())
                conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

    def measure(self, body: Callable[[], object]) -> RoundTrips:
        """Round trips ``body`` makes on every traced connection."""
        before = self._flush()
        self._resume()
        body()
        self._flush()
        self._resume()
        total = RoundTrips()
        for (_, handle), start in zip(self._traces, before, strict=False):
            with open(handle.name, encoding="utf-8", errors="replace") as reader:
                text = reader.read()
            names = _prepared_names(text[:start])
            part = _count_round_trips(text[start:], names)
            total.round_trips += part.round_trips
            total.transactions += part.transactions
            total.labels += part.labels
        return total

    def close(self) -> None:
        self._flush()
        for _, handle in self._traces:
            handle.close()
        self._dir.cleanup()


def _messages(text: str) -> Iterator[tuple[str, str, str]]:
    """(direction, message type, arguments) per traced message; libpq writes the text of
    a multi-line query as it is, so lines that start no message continue the last one."""
    message: list[str] | None = None
    for line in text.splitlines():
        parts = line.split("\t", 3)
        if len(parts) >= 3 and parts[0] in ("F", "B"):
            if message is not None:
                yield message[0], message[1], message[2]
            message = [parts[0], parts[2], parts[3].strip() if len(parts) > 3 else ""]
        elif message is not None:
            message[2] += "\n" + line
    if message is not None:
        yield message[0], message[1], message[2]


def _quoted(args: str) -> list[str]:
    return args.split('"')[1::2]


def _statement(kind: str, args: str, names: dict[str, str]) -> str | None:
    """The SQL a sent message carries or names (``None`` for other messages)."""
    if kind == "Query":
        return args.strip()[1:-1]
    if kind == "Parse":
        name, _, rest = args.strip()[1:].partition('"')
        sql = rest[rest.find('"') + 1 : rest.rfind('"')]
        if name:
            names[name] = sql
        return sql
    if kind == "Bind":
        quoted = _quoted(args)
        name = quoted[1] if len(quoted) > 1 else ""
        return names.get(name, name)
    return None


def _prepared_names(text: str) -> dict[str, str]:
    names: dict[str, str] = {}
    for direction, kind, args in _messages(text):
        if direction == "F" and kind == "Parse":
            _statement(kind, args, names)
    return names


def _count_round_trips(text: str, names: dict[str, str]) -> RoundTrips:
    """Round trips are runs of sent messages answered by the server; each is labelled by
    its first statement and, when it carried several, how many the server completed."""
    result = RoundTrips()
    sending = False
    first: str | None = None
    completed = 0

    def close() -> None:
        if result.labels and completed > 1:
            result.labels[-1] += f" (+{completed - 1} more statements)"

    for direction, kind, args in _messages(text):
        if direction == "F":
            if not sending:
                close()
                sending, first, completed = True, None, 0
            sql = _statement(kind, args, names)
            if first is None and sql is not None:
                first = label(_strip_comments(sql))
        else:
            result.transactions += kind == "ReadyForQuery" and args == "I"
            completed += kind == "CommandComplete"
            if sending:
                sending = False
                result.round_trips += 1
                result.labels.append(first or "(protocol message)")
    close()
    return result


# -- counting per step ----------------------------------------------------------------


def sqlite_commit_counts(
    counter: SqliteStatements, run: Callable[[int], None], repeats: int = 3
) -> dict[str, Any]:
    """Write commits and statements of a 10-step and a 20-step run; per step is the
    difference over the 10 extra steps, so per-run costs (start, claim) drop out."""
    for steps in (10, 20):
        run(steps)
    per_run: dict[int, dict[str, float]] = {}
    shapes: dict[tuple[str, ...], int] = {}
    for steps in (10, 20):
        seen = []
        for _ in range(repeats):
            with counter.counting() as count:
                run(steps)
            seen.append(count)
            if steps == 20:
                for transaction in count.transactions:
                    shapes[tuple(transaction)] = shapes.get(tuple(transaction), 0) + 1
        per_run[steps] = {
            "write_commits": statistics.median(c.write_commits for c in seen),
            "commits": statistics.median(c.commits for c in seen),
            "statements": statistics.median(c.statements for c in seen),
        }
    common = sorted(shapes.items(), key=lambda kv: -kv[1])[:3]
    return {
        "write_commits_per_run": {s: per_run[s]["write_commits"] for s in per_run},
        "all_commits_per_run": {s: per_run[s]["commits"] for s in per_run},
        "statements_per_run": {s: per_run[s]["statements"] for s in per_run},
        "write_commits_per_step": (per_run[20]["write_commits"] - per_run[10]["write_commits"])
        / 10,
        "statements_per_step": (per_run[20]["statements"] - per_run[10]["statements"]) / 10,
        "common_write_transactions": [
            {"per_20_step_run": n / repeats, "statements": list(shape)} for shape, n in common
        ],
    }


def pg_round_trip_counts(tracer: PgRoundTrips, run: Callable[[int], None]) -> dict[str, Any]:
    """Round trips of a 10-step and a 20-step run, after warm-up (statements prepared)."""
    for _ in range(3):
        for steps in (10, 20):
            run(steps)
    trips = {steps: tracer.measure(lambda s=steps: run(s)) for steps in (10, 20)}
    added = collections.Counter(trips[20].labels)
    added.subtract(trips[10].labels)
    return {
        "round_trips_per_run": {s: t.round_trips for s, t in trips.items()},
        "transactions_per_run": {s: t.transactions for s, t in trips.items()},
        "round_trips_per_step": (trips[20].round_trips - trips[10].round_trips) / 10,
        "transactions_per_step": (trips[20].transactions - trips[10].transactions) / 10,
        "round_trips_added_per_step": {k: v / 10 for k, v in added.items() if v},
        "round_trips_of_a_10_step_run": trips[10].labels,
    }


# -- the machine ----------------------------------------------------------------------


def machine(postgres: dict[str, str] | None) -> dict[str, Any]:
    """What the figures were taken on: they mean little without it."""

    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgres": postgres,
        "packages": {
            name: version(name)
            for name in (
                "tether",
                "pydantic",
                "psycopg",
                "langgraph",
                "langgraph-checkpoint",
                "langgraph-checkpoint-sqlite",
                "langgraph-checkpoint-postgres",
                "dbos",
                "sqlalchemy",
            )
        },
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
