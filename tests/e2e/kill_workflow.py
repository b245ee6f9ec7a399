"""A 20-node workflow with a keyed effect in every node, for the real-kill test.

Its effects call a counting service kept in a SQLite file (``KILL_SERVICE_DB``): every
call is logged with its start time before anything else happens, and each key is applied
once. The effect takes a few milliseconds, so a kill at a random moment often lands
between an effect's intent and its result.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time

from pydantic import BaseModel

from tether.runs import END, RunContext, Workflow, WorkflowRegistry

NODES = 20
EFFECT_SECONDS = 0.03


class Counter(BaseModel):
    done: list[int] = []


_local = threading.local()


def service() -> sqlite3.Connection:
    """This thread's connection to the service's file (a worker may run several)."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is not None:
        return conn
    conn = sqlite3.connect(os.environ["KILL_SERVICE_DB"], isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS calls (key TEXT NOT NULL, started REAL NOT NULL, pid INTEGER)"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS applied (key TEXT PRIMARY KEY)")
    _local.conn = conn
    return conn


def apply_once(key: str) -> str:
    db = service()
    db.execute("INSERT INTO calls VALUES (?, ?, ?)", (key, time.time(), os.getpid()))
    time.sleep(EFFECT_SECONDS)
    db.execute("INSERT OR IGNORE INTO applied VALUES (?)", (key,))
    return key


kill_test = Workflow("kill_test", state=Counter, max_steps=100)


def make_node(index: int) -> None:
    def node(ctx: RunContext, state: Counter) -> str:
        ctx.effect(f"effect_{index}", apply_once, request={"node": index}, retry_safe=True)
        state.done.append(index)
        return f"n{index + 1}" if index + 1 < NODES else END

    kill_test.node(node, name=f"n{index}", start=index == 0)


for _index in range(NODES):
    make_node(_index)

registry = WorkflowRegistry(kill_test)
