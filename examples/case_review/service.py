"""A small case-management service with its own SQLite file.

It stands in for the external system a real agent would call. It counts every call it
receives, per idempotency key, so the demo and the tests can show honestly how many times
each side effect reached it, and applies each key at most once.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS cases (
    case_id TEXT PRIMARY KEY, title TEXT NOT NULL, status TEXT NOT NULL,
    claimant TEXT NOT NULL, amount INTEGER NOT NULL, assigned_to TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS policies (
    policy_id TEXT PRIMARY KEY, version INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notes (
    note_id INTEGER PRIMARY KEY AUTOINCREMENT, case_id TEXT NOT NULL, text TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS decisions (
    case_id TEXT NOT NULL, decision TEXT NOT NULL, amount INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, operation TEXT NOT NULL,
    idempotency_key TEXT NOT NULL, applied INTEGER NOT NULL, at REAL NOT NULL
);
"""


class CaseService:
    """Open with a file path; every method is one short transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.executescript(SCHEMA)

    @classmethod
    def from_env(cls) -> CaseService:
        return cls(os.environ.get("CASE_SERVICE_DB", "case_service.db"))

    def seed(self) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO cases VALUES ('C-1001', 'Water damage claim', 'open', "
            "'claimant-88', 4200, 'case-agent')"
        )
        self._db.execute(
            "INSERT OR REPLACE INTO cases VALUES ('C-1002', 'Storm damage to a roof', 'open', "
            "'claimant-91', 3100, 'case-agent')"
        )
        self._db.execute(
            "INSERT OR REPLACE INTO policies VALUES ('household-claims', 3, "
            "'Claims over 2,000 need a supporting report and supervisor approval.')"
        )

    def get_case(self, case_id: str) -> dict[str, Any]:
        row = self._db.execute(
            "SELECT case_id, title, status, claimant, amount, assigned_to FROM cases "
            "WHERE case_id = ?",
            (case_id,),
        ).fetchone()
        if row is None:
            raise LookupError(f"no case {case_id}")
        keys = ("case_id", "title", "status", "claimant", "amount", "assigned_to")
        return dict(zip(keys, row, strict=True))

    def get_policy(self, policy_id: str) -> dict[str, Any]:
        row = self._db.execute(
            "SELECT policy_id, version, text FROM policies WHERE policy_id = ?", (policy_id,)
        ).fetchone()
        if row is None:
            raise LookupError(f"no policy {policy_id}")
        return {"policy_id": row[0], "version": row[1], "text": row[2]}

    def _record_call(self, operation: str, key: str, applied: bool) -> None:
        self._db.execute(
            "INSERT INTO calls (operation, idempotency_key, applied, at) VALUES (?, ?, ?, ?)",
            (operation, key, int(applied), time.time()),
        )

    def add_note(self, case_id: str, text: str, key: str) -> dict[str, Any]:
        """Create a case note once per key (a repeat returns the same note)."""
        self._db.execute("BEGIN IMMEDIATE")
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO notes (case_id, text, idempotency_key) VALUES (?, ?, ?)",
            (case_id, text, key),
        )
        self._record_call("add_note", key, cursor.rowcount == 1)
        self._db.execute("COMMIT")
        self._maybe_pause("add_note")
        return self.find_note(key) or {}

    def notes(self, case_id: str) -> list[str]:
        rows = self._db.execute(
            "SELECT text FROM notes WHERE case_id = ? ORDER BY note_id", (case_id,)
        ).fetchall()
        return [row[0] for row in rows]

    def find_note(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT note_id, case_id FROM notes WHERE idempotency_key = ?", (key,)
        ).fetchone()
        return None if row is None else {"note_id": row[0], "case_id": row[1]}

    def finalise(self, case_id: str, decision: str, amount: int, key: str) -> dict[str, Any]:
        self._db.execute("BEGIN IMMEDIATE")
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO decisions VALUES (?, ?, ?, ?)", (case_id, decision, amount, key)
        )
        applied = cursor.rowcount == 1
        if applied:
            self._db.execute("UPDATE cases SET status = 'decided' WHERE case_id = ?", (case_id,))
        self._record_call("finalise", key, applied)
        self._db.execute("COMMIT")
        return {"case_id": case_id, "decision": decision, "amount": amount}

    def calls_by_key(self) -> dict[str, tuple[str, int, int]]:
        """``{key: (operation, calls received, times applied)}``."""
        rows = self._db.execute(
            "SELECT idempotency_key, operation, COUNT(*), SUM(applied) FROM calls "
            "GROUP BY idempotency_key, operation"
        ).fetchall()
        return {row[0]: (row[1], int(row[2]), int(row[3])) for row in rows}

    def _maybe_pause(self, operation: str) -> None:
        """Demo hook: after applying ``operation``, say so in a marker file and hang, so a
        supervisor process can SIGKILL us between the effect and its record."""
        if os.environ.get("CASE_SERVICE_PAUSE_AFTER") != operation:
            return
        marker = Path(os.environ["CASE_SERVICE_MARKER"])
        marker.write_text("applied")
        time.sleep(600)

    def close(self) -> None:
        self._db.close()
