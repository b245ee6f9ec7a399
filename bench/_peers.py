"""The peers, doing the same workload: LangGraph with SqliteSaver, and DBOS on SQLite.

Both come from the ``bench`` extra (``pip install -e '.[bench]'``) and are imported only
here, so the benchmark still runs (and says why a peer is missing) without them.
"""

from __future__ import annotations

import itertools
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

from bench._harness import Contender, SqliteStatements, sqlite_commit_counts, unavailable

SYNC_MODES = ("NORMAL", "FULL")


class LgCounter(TypedDict):
    n: int


def _lg_increment(state: LgCounter) -> dict[str, int]:
    return {"n": state["n"] + 1}


def _lg_builder(steps: int) -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(LgCounter)
    names = [f"node{i}" for i in range(steps)]
    for name in names:
        builder.add_node(name, _lg_increment)
    builder.add_edge(START, names[0])
    for here, there in itertools.pairwise(names):
        builder.add_edge(here, there)
    builder.add_edge(names[-1], END)
    return builder


def open_sqlite(path: Path, synchronous: str) -> sqlite3.Connection:
    """A connection in WAL mode at ``synchronous``, as the peers are run (and as Tether is)."""
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


def langgraph_contenders(stack: ExitStack, workdir: Path) -> list[Contender]:
    """LangGraph without a checkpointer, and with SqliteSaver at NORMAL and at FULL.

    Runs use ``durability="sync"``: each superstep's checkpoint is written before the next
    node starts, the guarantee a durable step gives. (LangGraph's default, ``"async"``,
    writes it in a background thread while the next node runs.)
    """
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver

        builders = {steps: _lg_builder(steps) for steps in (10, 20)}
    except ImportError as exc:
        reason = f"not installed ({exc.name}): pip install -e '.[bench]'"
        return [
            unavailable("langgraph-none", "LangGraph", "no checkpointer", reason),
            *(
                unavailable(f"langgraph-{m.lower()}", "LangGraph", f"SqliteSaver {m}", reason)
                for m in SYNC_MODES
            ),
        ]

    def runner(checkpointer: Any, durability: str | None) -> Callable[[int], None]:
        graphs = {steps: b.compile(checkpointer=checkpointer) for steps, b in builders.items()}

        def run(steps: int) -> None:
            config = {"configurable": {"thread_id": str(uuid.uuid4())}} if checkpointer else None
            options = {"durability": durability} if durability else {}
            result = graphs[steps].invoke({"n": 0}, config, **options)
            if result["n"] != steps:
                raise RuntimeError(f"LangGraph counted {result['n']}, expected {steps}")

        return run

    contenders = [Contender("langgraph-none", "LangGraph", "no checkpointer", runner(None, None))]
    for mode in SYNC_MODES:
        conn = stack.enter_context(closing(open_sqlite(workdir / f"langgraph-{mode}.db", mode)))
        counter = SqliteStatements()
        counter.attach(conn)
        saver = SqliteSaver(conn)
        saver.setup()
        run = runner(saver, "sync")
        contenders.append(
            Contender(
                f"langgraph-{mode.lower()}",
                "LangGraph",
                f"SqliteSaver, WAL, synchronous={mode}",
                run,
                baseline="langgraph-none",
                compare_to=f"tether-sqlite-{mode.lower()}",
                counts=partial(sqlite_commit_counts, counter, run),
            )
        )
    return contenders


# -- DBOS ------------------------------------------------------------------------------

_dbos_sync = ["FULL"]
_dbos_counter = SqliteStatements()
_dbos_functions: dict[str, Any] = {}


def _make_add_one() -> Callable[[int], int]:
    def add_one(n: int) -> int:
        return n + 1

    return add_one


def _dbos_setup(counter: SqliteStatements) -> dict[str, Any]:
    """Register the steps and workflows with DBOS once per process."""
    if _dbos_functions:
        return _dbos_functions
    from dbos import DBOS
    from sqlalchemy import event
    from sqlalchemy.pool import Pool

    @event.listens_for(Pool, "connect")
    def _wal(dbapi_conn: Any, record: Any) -> None:
        if isinstance(dbapi_conn, sqlite3.Connection):
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
            counter.attach(dbapi_conn)

    @event.listens_for(Pool, "checkout")
    def _synchronous(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        wanted = _dbos_sync[0]
        if isinstance(dbapi_conn, sqlite3.Connection) and record.info.get("sync") != wanted:
            dbapi_conn.execute(f"PRAGMA synchronous={wanted}")
            record.info["sync"] = wanted

    raw = [_make_add_one() for _ in range(20)]
    steps = [DBOS.step(name=f"bench_step{i}")(fn) for i, fn in enumerate(raw)]

    def chain(count: int) -> Callable[[int], int]:
        def workflow(n: int) -> int:
            for step in steps[:count]:
                n = step(n)
            return n

        return DBOS.workflow(name=f"bench_chain{count}")(workflow)

    _dbos_functions.update(raw=raw, workflows={10: chain(10), 20: chain(20)})
    return _dbos_functions


@contextmanager
def _dbos_launched(path: Path) -> Iterator[None]:
    from dbos import DBOS

    DBOS(
        config={
            "name": "tether-bench",
            "system_database_url": f"sqlite:///{path}",
            "log_level": "WARNING",
        }
    )
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()


def dbos_contenders(stack: ExitStack, workdir: Path) -> list[Contender]:
    """The same functions called plainly, and as ``@DBOS.step``s of a ``@DBOS.workflow``.

    DBOS is one instance per process, so NORMAL and FULL share its database file; the
    mode is switched on each pooled connection when it is checked out.
    """
    try:
        from dbos import SetWorkflowID

        functions = _dbos_setup(_dbos_counter)
        stack.enter_context(_dbos_launched(workdir / "dbos.sqlite"))
    except Exception as exc:
        reason = f"cannot run: {type(exc).__name__}: {exc}"
        if isinstance(exc, ImportError):
            reason = f"not installed ({exc.name}): pip install -e '.[bench]'"
        return [
            unavailable("dbos-none", "DBOS", "functions without DBOS", reason),
            *(unavailable(f"dbos-{m.lower()}", "DBOS", f"SQLite {m}", reason) for m in SYNC_MODES),
        ]

    def plain(steps: int) -> None:
        n = 0
        for fn in functions["raw"][:steps]:
            n = fn(n)
        if n != steps:
            raise RuntimeError(f"plain functions counted {n}, expected {steps}")

    def durable(mode: str) -> Callable[[int], None]:
        def run(steps: int) -> None:
            _dbos_sync[0] = mode
            with SetWorkflowID(str(uuid.uuid4())):
                n = functions["workflows"][steps](0)
            if n != steps:
                raise RuntimeError(f"DBOS counted {n}, expected {steps}")

        return run

    contenders = [Contender("dbos-none", "DBOS", "the step functions without DBOS", plain)]
    for mode in SYNC_MODES:
        run = durable(mode)
        contenders.append(
            Contender(
                f"dbos-{mode.lower()}",
                "DBOS",
                f"SQLite, WAL, synchronous={mode}",
                run,
                baseline="dbos-none",
                compare_to=f"tether-sqlite-{mode.lower()}",
                counts=partial(sqlite_commit_counts, _dbos_counter, run),
            )
        )
    return contenders
