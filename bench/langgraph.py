"""LangGraph's checkpointers side by side: TetherSaver, SqliteSaver and PostgresSaver.

Two workloads, the same graphs for every checkpointer, ``durability="sync"`` (each
superstep's checkpoint is written before the next node runs):

- **chain**: a 10-node chain (each node adds one to a counter), a new thread per run,
  ``--runs`` runs after ``--warmup``, interleaved in chunks. Time per checkpoint = (median
  ms per run - median without a checkpointer) / checkpoints per run.
- **growth**: one thread of ``--growth-steps`` steps, each appending a message of ~700
  random letters (``add_messages``): bytes the checkpointer stored for the thread (the
  database's payload columns) against the final message list.

SQLite databases are files in one temporary folder, WAL, at ``synchronous=NORMAL`` and at
``FULL`` (Tether's default: a commit survives power loss) for both savers; PostgreSQL
databases are made fresh on the server of ``TETHER_BENCH_POSTGRES_URL``
(``synchronous_commit`` as the server has it, the same for both) and dropped afterwards.

    python -m bench.langgraph              # make bench
    python -m bench.langgraph --runs 30    # a quick check
    python -m bench.langgraph --profile sqlite-normal   # where TetherSaver's time goes
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shlex
import string
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph.message import add_messages

from bench._harness import Contender, bench_settings, machine, measure, median_ms, p95_ms
from bench._peers import open_sqlite
from bench._tether import TENANT, postgres_settings, scratch_postgres

STEPS = 10
SYNC_MODES = ("NORMAL", "FULL")
RESULTS = Path(__file__).parent / "results" / "langgraph-latest.json"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
TARGET_STORAGE = 0.1
MESSAGE_CHARS = 700


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.langgraph", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=200, help="timed runs per contender")
    parser.add_argument("--warmup", type=int, default=20, help="untimed runs first")
    parser.add_argument("--chunk", type=int, default=10, help="runs in a row per contender")
    parser.add_argument("--growth-steps", type=int, default=200, help="steps of the long thread")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("TETHER_BENCH_POSTGRES_URL", DEFAULT_PG),
        help="server to make scratch databases on (env TETHER_BENCH_POSTGRES_URL)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write results")
    parser.add_argument(
        "--profile",
        choices=("sqlite-normal", "sqlite-full", "postgres"),
        help="instead of the benchmark, count calls and statements of --runs chain runs per"
        " checkpointer here, then profile TetherSaver's put and put_writes",
    )
    return parser.parse_args(argv)


# -- the graphs ----------------------------------------------------------------------------


class Counter(TypedDict):
    n: int


def _increment(state: Counter) -> dict[str, int]:
    return {"n": state["n"] + 1}


def chain_builder() -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(Counter)
    names = [f"node{i}" for i in range(STEPS)]
    for name in names:
        builder.add_node(name, _increment)
    builder.add_edge(START, names[0])
    for here, there in itertools.pairwise(names):
        builder.add_edge(here, there)
    builder.add_edge(names[-1], END)
    return builder


def message_text(index: int) -> str:
    """Message ``index``: random (incompressible) letters, the same for every saver."""
    return "".join(random.Random(index).choices(string.ascii_letters, k=MESSAGE_CHARS))


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def growth_builder(steps: int) -> Any:
    from langgraph.graph import END, START, StateGraph

    def speak(state: Chat) -> dict[str, Any]:
        index = len(state["messages"])
        return {"messages": [AIMessage(content=message_text(index), id=f"m{index}")]}

    def route(state: Chat) -> str:
        return END if len(state["messages"]) >= steps else "speak"

    builder = StateGraph(Chat)
    builder.add_node("speak", speak)
    builder.add_edge(START, "speak")
    builder.add_conditional_edges("speak", route)
    return builder


# -- the checkpointers ---------------------------------------------------------------------


class Saver:
    """One checkpointer in one database, and how to count what it stored for a thread."""

    def __init__(
        self, key: str, system: str, config: str, saver: Any, stored: Callable[[str], int]
    ):
        self.key = key
        self.system = system
        self.config = config
        self.saver = saver
        self.stored = stored


def sqlite_saver(stack: ExitStack, workdir: Path, mode: str) -> Saver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = stack.enter_context(closing(open_sqlite(workdir / f"sqlite-saver-{mode}.db", mode)))
    saver = SqliteSaver(conn)
    saver.setup()

    def stored(thread: str) -> int:
        row = conn.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0)"
            " FROM checkpoints WHERE thread_id = ?)"
            " + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?)",
            (thread, thread),
        ).fetchone()
        return int(row[0])

    config = f"SQLite, WAL, synchronous={mode}"
    return Saver(f"sqlite-saver-{mode.lower()}", "SqliteSaver", config, saver, stored)


def postgres_saver(stack: ExitStack, url: str) -> Saver:
    from langgraph.checkpoint.postgres import PostgresSaver

    saver = stack.enter_context(PostgresSaver.from_conn_string(url))
    saver.setup()

    def stored(thread: str) -> int:
        row = saver.conn.execute(
            "SELECT (SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)),"
            " 0) FROM checkpoints WHERE thread_id = %(t)s)"
            " + (SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM checkpoint_blobs"
            " WHERE thread_id = %(t)s)"
            " + (SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM checkpoint_writes"
            " WHERE thread_id = %(t)s) AS bytes",
            {"t": thread},
        ).fetchone()
        return int(row["bytes"])

    return Saver("postgres-saver", "PostgresSaver", "PostgreSQL", saver, stored)


_TETHER_STORED = (
    "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0)"
    " FROM graph_checkpoints WHERE thread_id = ?)"
    " + (SELECT COALESCE(SUM(LENGTH(data)), 0) FROM graph_blobs WHERE thread_id = ?)"
    " + (SELECT COALESCE(SUM(LENGTH(data)), 0) FROM graph_writes WHERE thread_id = ?)"
)


def tether_saver(stack: ExitStack, url: str, mode: str | None = None) -> Saver:
    """TetherSaver on ``url`` (SQLite at ``synchronous=mode``, or PostgreSQL)."""
    from tether import Tether
    from tether.integrations.langgraph import TetherSaver

    Tether.migrate(bench_settings(url))[0].close()
    settings = bench_settings(url, sqlite_synchronous=mode or "FULL", embedder="none")
    app = stack.enter_context(Tether.open(settings))
    app.tenants.create(TENANT, admin="admin")
    admin = app.tenants.principal(TENANT, "admin")
    app.tenants.grant(admin, "agent", ["agent"])
    saver = TetherSaver(app, app.tenants.principal(TENANT, "agent"))
    backend = app.storage.backend

    def stored(thread: str) -> int:
        sql = _TETHER_STORED if backend == "sqlite" else _TETHER_STORED.replace("?", "%s")
        with _raw(url, backend) as raw:
            return int(raw.execute(sql, [thread] * 3).fetchone()[0])

    if mode is None:
        return Saver("tether-postgres", "TetherSaver", "PostgreSQL", saver, stored)
    config = f"SQLite, WAL, synchronous={mode}"
    return Saver(f"tether-{mode.lower()}", "TetherSaver", config, saver, stored)


@contextmanager
def _raw(url: str, backend: str) -> Iterator[Any]:
    """A plain connection to the database (reading the payload sizes, untimed)."""
    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            yield conn
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


# -- the workloads -------------------------------------------------------------------------


CPU: dict[str, list[float]] = {}
"""CPU seconds (this process, every thread) of each timed run, by contender."""


def chain_contender(saver: Saver | None, builder: Any) -> Contender:
    graph = builder.compile(checkpointer=saver.saver if saver else None)
    key = saver.key if saver else "none"
    cpu = CPU.setdefault(key, [])

    def run(steps: int) -> None:
        config = {"configurable": {"thread_id": str(uuid.uuid4())}} if saver else None
        options = {"durability": "sync"} if saver else {}
        started = time.process_time()
        result = graph.invoke({"n": 0}, config, **options)
        cpu.append(time.process_time() - started)
        if result["n"] != steps:
            raise RuntimeError(f"counted {result['n']}, expected {steps}")

    if saver is None:
        return Contender("none", "LangGraph", "no checkpointer", run)
    return Contender(saver.key, saver.system, saver.config, run, baseline="none")


def checkpoints_per_run(saver: Saver, builder: Any) -> int:
    """How many checkpoints one chain run writes (counted once, untimed)."""
    puts = 0
    real = saver.saver.put

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal puts
        puts += 1
        return real(*args, **kwargs)

    saver.saver.put = counting
    try:
        chain_contender(saver, builder).run(STEPS)
    finally:
        del saver.saver.put
    return puts


def growth(saver: Saver, steps: int) -> dict[str, Any]:
    """One thread of ``steps`` steps: seconds, bytes stored, bytes of the final state."""
    graph = growth_builder(steps).compile(checkpointer=saver.saver)
    thread = f"growth-{uuid.uuid4()}"
    config = {"configurable": {"thread_id": thread}, "recursion_limit": steps + 10}
    started = time.perf_counter()
    final = graph.invoke({"messages": []}, config, durability="sync")
    seconds = time.perf_counter() - started
    if len(final["messages"]) != steps:
        raise RuntimeError(f"{saver.key}: {len(final['messages'])} messages, expected {steps}")
    _, state = saver.saver.serde.dumps_typed(final["messages"])
    return {
        "key": saver.key,
        "system": saver.system,
        "config": saver.config,
        "steps": steps,
        "seconds": seconds,
        "stored_bytes": saver.stored(thread),
        "final_state_bytes": len(state),
    }


# -- main ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        from bench.langgraph_profile import profile

        return profile(args)
    started = time.perf_counter()
    builder = chain_builder()
    with tempfile.TemporaryDirectory(prefix="tether-bench-lg-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        savers = []
        for mode in SYNC_MODES:
            savers.append(tether_saver(stack, f"sqlite:///{workdir / f'tether-{mode}.db'}", mode))
            savers.append(sqlite_saver(stack, workdir, mode))
        pg_info, pg_error = None, "skipped (--no-postgres)" if args.no_postgres else None
        if not args.no_postgres:
            try:
                tether_pg, _ = stack.enter_context(scratch_postgres(args.postgres_url))
                peer_pg, _ = stack.enter_context(scratch_postgres(args.postgres_url))
                pg_info = postgres_settings(tether_pg)
                savers.append(tether_saver(stack, tether_pg))
                savers.append(postgres_saver(stack, peer_pg))
            except Exception as exc:
                pg_error = f"no server at {args.postgres_url}: {type(exc).__name__}: {exc}"
                pg_error = pg_error.splitlines()[0][:200]
        per_run = {s.key: checkpoints_per_run(s, builder) for s in savers}
        contenders = [chain_contender(None, builder)] + [
            chain_contender(s, builder) for s in savers
        ]
        log(f"chain: {len(contenders)} contenders, {args.runs} runs each, interleaved")
        measure(
            contenders, runs=args.runs, warmup=args.warmup, chunk=args.chunk, steps=STEPS, log=log
        )
        log(f"growth: one thread of {args.growth_steps} steps per checkpointer")
        grown = [growth(s, args.growth_steps) for s in savers]
    results = assemble(
        args, contenders, per_run, grown, pg_info, pg_error, time.perf_counter() - started
    )
    print(render(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    log(f"wrote {args.json}")
    return 0


def assemble(
    args: argparse.Namespace,
    contenders: list[Contender],
    per_run: dict[str, int],
    grown: list[dict[str, Any]],
    pg_info: dict[str, str] | None,
    pg_error: str | None,
    seconds: float,
) -> dict[str, Any]:
    by_key = {c.key: c for c in contenders}
    base = by_key["none"]
    rows = []
    for c in contenders:
        row: dict[str, Any] = {
            "key": c.key,
            "system": c.system,
            "config": c.config,
            "median_ms": median_ms(c.samples) if c.ok else None,
            "p95_ms": p95_ms(c.samples) if c.ok else None,
            "checkpoints_per_run": per_run.get(c.key),
            "error": c.error,
        }
        if c.key in per_run and c.ok and base.ok:
            extra = median_ms(c.samples) - median_ms(base.samples)
            row["ms_per_checkpoint"] = extra / per_run[c.key]
            cpu = median_ms(_timed(c.key, len(c.samples))) - median_ms(_timed("none", None))
            row["cpu_ms_per_checkpoint"] = cpu / per_run[c.key]
        rows.append(row)
    timing = {row["key"]: row.get("ms_per_checkpoint") for row in rows}
    cpu_timing = {row["key"]: row.get("cpu_ms_per_checkpoint") for row in rows}
    for row in rows:
        peer = PEERS.get(row["key"])
        if peer and timing.get(peer) and row.get("ms_per_checkpoint") is not None:
            row["peer"] = peer
            row["time_ratio"] = row["ms_per_checkpoint"] / timing[peer]
        if peer and cpu_timing.get(peer) and row.get("cpu_ms_per_checkpoint") is not None:
            row["cpu_ratio"] = row["cpu_ms_per_checkpoint"] / cpu_timing[peer]
    stored = {g["key"]: g["stored_bytes"] for g in grown}
    for entry in grown:
        entry["stored_per_state"] = entry["stored_bytes"] / entry["final_state_bytes"]
        peer = PEERS.get(entry["key"])
        if peer in stored:
            entry["peer"] = peer
            entry["storage_ratio"] = entry["stored_bytes"] / stored[peer]
    results = {
        "benchmark": "LangGraph checkpointers",
        "command": " ".join(["python -m bench.langgraph", shlex.join(sys.argv[1:])]).strip(),
        "workload": f"{STEPS}-node chain, {args.runs} runs after {args.warmup} warm-up; "
        f"a {args.growth_steps}-step growing message thread",
        "machine": machine(pg_info),
        "postgres_error": pg_error,
        "seconds": seconds,
        "rows": rows,
        "growth": grown,
    }
    results["targets"] = check_targets(rows, grown)
    return results


def _timed(key: str, count: int | None) -> list[float]:
    """The CPU samples of the timed runs (the warm-up ones dropped)."""
    samples = CPU.get(key, [])
    return samples[-count:] if count else samples


PEERS = {
    "tether-normal": "sqlite-saver-normal",
    "tether-full": "sqlite-saver-full",
    "tether-postgres": "postgres-saver",
}
"""Each TetherSaver and the peer on the same database it is compared with."""


def check_targets(rows: list[dict[str, Any]], grown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_key = {row["key"]: row for row in rows}
    checks = []
    for mode in SYNC_MODES:
        row = by_key.get(f"tether-{mode.lower()}", {})
        for what, field in (("time", "time_ratio"), ("CPU time", "cpu_ratio")):
            ratio = row.get(field)
            checks.append(
                {
                    "target": f"SQLite {mode}: TetherSaver {what} per checkpoint < SqliteSaver's",
                    "value": None if ratio is None else round(ratio, 2),
                    "met": None if ratio is None else ratio < 1.0,
                }
            )
    for entry in grown:
        if entry["key"].startswith("tether-") and "storage_ratio" in entry:
            ratio = entry["storage_ratio"]
            checks.append(
                {
                    "target": f"growth ({entry['config']}): TetherSaver stores <= "
                    f"{TARGET_STORAGE:g}x its peer's bytes",
                    "value": round(ratio, 4),
                    "met": ratio <= TARGET_STORAGE,
                }
            )
    return checks


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(results: dict[str, Any]) -> str:
    out = [f"## LangGraph checkpointers: {results['workload']}", ""]
    out += [
        "| checkpointer | database | median ms/run | p95 ms/run | checkpoints/run "
        "| ms/checkpoint | ratio to peer | CPU ms/checkpoint | CPU ratio | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        ratio = row.get("time_ratio")
        versus = "" if ratio is None else f"{ratio:.2f}x {row['peer']}"
        cpu_ratio = row.get("cpu_ratio")
        cpu_versus = "" if cpu_ratio is None else f"{cpu_ratio:.2f}x"
        out.append(
            f"| {row['system']} | {row['config']} | {_num(row['median_ms'])} "
            f"| {_num(row['p95_ms'])} | {row['checkpoints_per_run'] or '-'} "
            f"| {_num(row.get('ms_per_checkpoint'))} "
            f"| {versus} | {_num(row.get('cpu_ms_per_checkpoint'))} | {cpu_versus} "
            f"| {row['error'] or ''} |"
        )
    out += ["", "### Growing thread: bytes stored", ""]
    out += [
        "| checkpointer | database | steps | seconds | final messages | stored | stored/final "
        "| ratio to peer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for g in results["growth"]:
        ratio = g.get("storage_ratio")
        out.append(
            f"| {g['system']} | {g['config']} | {g['steps']} | {g['seconds']:.1f} "
            f"| {g['final_state_bytes']:,} B | {g['stored_bytes']:,} B "
            f"| {g['stored_per_state']:.2f}x | {'' if ratio is None else f'{ratio:.4f}x'} |"
        )
    if results["postgres_error"]:
        out.append(f"\nPostgreSQL not measured: {results['postgres_error']}")
    out += ["", "### Targets", ""]
    for check in results["targets"]:
        verdict = {True: "met", False: "MISSED", None: "not measured"}[check["met"]]
        out.append(f"- {check['target']}: {check['value']} -> {verdict}")
    m = results["machine"]
    pg = m["postgres"] or {}
    out += [
        "",
        f"Machine: {m['cores']} cores ({m['cpu']}), Python {m['python']}, SQLite {m['sqlite']}"
        + (
            f", PostgreSQL {pg['server_version']} (synchronous_commit={pg['synchronous_commit']})"
            if pg
            else ""
        )
        + f"; {', '.join(f'{k} {v}' for k, v in m['packages'].items() if v)}.",
        f"Date: {m['date']}. Command: {results['command']} ({results['seconds']:.0f} s).",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
