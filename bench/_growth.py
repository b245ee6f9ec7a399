"""Storage growth: one long run whose state gains a ~700-byte item at every step."""

from __future__ import annotations

import operator
import random
import sqlite3
import string
import time
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel

from bench._harness import bench_settings
from bench._peers import open_sqlite
from bench._tether import TENANT
from tether import Tether, canonical
from tether.runs import END, RunStatus, Workflow, WorkflowRegistry

ITEM_BYTES = 700


def item(index: int) -> dict[str, Any]:
    """Item ``index``: exactly ``ITEM_BYTES`` of canonical JSON, of random (incompressible)
    letters so that no storage layer gets to compress it away."""
    skeleton = len(canonical.dumps({"i": index, "text": ""}))
    letters = random.Random(index).choices(
        string.ascii_letters + string.digits, k=ITEM_BYTES - skeleton
    )
    return {"i": index, "text": "".join(letters)}


def state_bytes(steps: int) -> int:
    """Canonical JSON size of the state after ``steps`` steps (the same for both systems)."""
    return len(canonical.dumps({"items": [item(i) for i in range(steps)]}).encode())


def file_bytes(conn: sqlite3.Connection, path: Path) -> int:
    """Size of the database file once the WAL is checkpointed into it and truncated."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return path.stat().st_size


class Log(BaseModel):
    items: list[dict[str, Any]] = []


def tether_growth(workdir: Path, steps: int) -> dict[str, Any]:
    """One Tether run of ``steps`` steps on SQLite; bytes stored against the final state."""
    path = workdir / "growth-tether.db"
    url = f"sqlite:///{path}"
    workflow = Workflow("grow", state=Log, max_steps=steps + 1)

    @workflow.node
    def grow(ctx: Any, state: Log) -> str:
        state.items.append(item(len(state.items)))
        return "grow" if len(state.items) < steps else END

    migrated, _ = Tether.migrate(bench_settings(url))
    migrated.close()
    with Tether.open(bench_settings(url, sqlite_synchronous="NORMAL")) as app:
        app.tenants.create(TENANT, admin="admin")
        admin = app.tenants.principal(TENANT, "admin")
        app.tenants.grant(admin, "agent", ["agent"])
        agent = app.tenants.principal(TENANT, "agent")
        with closing(open_sqlite(path, "NORMAL")) as probe:
            before = file_bytes(probe, path)
            started = time.perf_counter()
            run = app.runs.start(agent, workflow, Log())
            result = app.executor(WorkflowRegistry(workflow)).execute(TENANT, run.run_id)
            elapsed = time.perf_counter() - started
            after = file_bytes(probe, path)
        if result.status is not RunStatus.COMPLETED:
            raise RuntimeError(f"growth run ended {result.status.value}: {result.error}")
        checkpoints = app.runs.checkpoints(agent, run.run_id)
        final = len(canonical.dumps(app.runs.state(agent, run.run_id)).encode())
    payload = [len(c.payload.encode()) for c in checkpoints]
    return {
        "system": "Tether",
        "config": "SQLite, deltas + snapshots",
        "steps": steps,
        "seconds": elapsed,
        "final_state_bytes": final,
        "payload_bytes": sum(payload),
        "file_growth_bytes": after - before,
        "full_snapshots": sum(1 for c in checkpoints if c.kind == "full"),
        "checkpoints": len(checkpoints),
        "cumulative_payload": _cumulative(payload),
    }


def _cumulative(sizes: list[int]) -> list[int]:
    total, out = 0, []
    for size in sizes:
        total += size
        out.append(total)
    return out


class LgLog(TypedDict):
    items: Annotated[list[dict[str, Any]], operator.add]


def langgraph_growth(workdir: Path, steps: int, seconds: float) -> dict[str, Any]:
    """The same workload on LangGraph + SqliteSaver (a list channel with an add reducer),
    stopped after ``seconds`` if it has not finished: it rewrites the whole list at every
    checkpoint, so its cost grows with the square of the steps."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END as LG_END
    from langgraph.graph import START, StateGraph

    def grow(state: LgLog) -> dict[str, Any]:
        return {"items": [item(len(state["items"]))]}

    def route(state: LgLog) -> str:
        return LG_END if len(state["items"]) >= steps else "grow"

    builder = StateGraph(LgLog)
    builder.add_node("grow", grow)
    builder.add_edge(START, "grow")
    builder.add_conditional_edges("grow", route)
    path = workdir / "growth-langgraph.db"
    with closing(open_sqlite(path, "NORMAL")) as conn:
        saver = SqliteSaver(conn)
        saver.setup()
        graph = builder.compile(checkpointer=saver)
        before = file_bytes(conn, path)
        config = {"configurable": {"thread_id": "growth"}, "recursion_limit": steps + 10}
        done = 0
        started = time.perf_counter()
        for _ in graph.stream({"items": []}, config, durability="sync", stream_mode="updates"):
            done += 1
            if time.perf_counter() - started > seconds:
                break
        elapsed = time.perf_counter() - started
        stored = conn.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0)"
            " FROM checkpoints) + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
        ).fetchone()[0]
        after = file_bytes(conn, path)
    return {
        "system": "LangGraph",
        "config": "SqliteSaver, list channel with operator.add",
        "steps": done,
        "seconds": elapsed,
        "stopped_early": done < steps,
        "final_state_bytes": state_bytes(done),
        "payload_bytes": int(stored),
        "file_growth_bytes": after - before,
    }
