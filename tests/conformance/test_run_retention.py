"""Run retention: `gc` keeps exactly what the policy says, never touches a held run, and
the space it frees comes back on VACUUM (1,000 runs, on both backends)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import TENANT, Harness, open_harness
from tests.support import PostgresServer, TestDatabase
from tether import Tether
from tether.errors import InvalidInput, PermissionDenied
from tether.runs import END, RunContext, RunStatus, Workflow, WorkflowRegistry

RUN_TABLES = ("run_events", "run_checkpoints", "run_journal", "run_inbox")
SIZE_TABLES = ("runs", "run_checkpoints", "run_journal", "run_waits", "run_events", "run_inbox")


class Notes(BaseModel):
    lines: list[str] = []


def workflow(name: str) -> Workflow[Notes]:
    wf: Workflow[Notes] = Workflow(name, state=Notes)

    @wf.node(start=True)
    def think(ctx: RunContext, s: Notes) -> str:
        s.lines.append(ctx.step("model", lambda: "thought " + "x" * 400))
        return "act"

    @wf.node
    def act(ctx: RunContext, s: Notes) -> str:
        s.lines.append(ctx.effect("send", lambda key: {"sent": key, "body": "y" * 300})["sent"])
        return END

    return wf


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


def per_run_counts(backend: TestDatabase) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    with backend.raw() as raw:
        for table in RUN_TABLES:
            for run_id, n in raw.execute(f"SELECT run_id, COUNT(*) FROM {table} GROUP BY run_id"):
                counts.setdefault(str(run_id), dict.fromkeys(RUN_TABLES, 0))[table] = int(n)
    return counts


def totals(backend: TestDatabase) -> dict[str, int]:
    with backend.raw() as raw:
        return {
            table: int(raw.execute(f"SELECT COUNT(*) FROM {table}")[0][0]) for table in RUN_TABLES
        }


def start_and_finish(h: Harness, wf: Workflow[Notes], count: int) -> list[str]:
    executor = h.executor(WorkflowRegistry(wf), "worker-1")
    ids = []
    for _ in range(count):
        run = h.app.runs.start(h.agent, wf, Notes())
        done = executor.execute(TENANT, run.run_id)
        assert done.status is RunStatus.COMPLETED, done.error
        ids.append(run.run_id)
    return ids


def test_gc_keeps_what_the_policy_says_and_the_space_comes_back(
    h: Harness, backend: TestDatabase, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    chat, billing = workflow("chat"), workflow("billing")
    old_chat = start_and_finish(h, chat, 500)
    old_billing = start_and_finish(h, billing, 200)
    h.clock.advance(timedelta(days=40))
    new_chat = start_and_finish(h, chat, 300)
    h.app.retention.set_policy(h.admin, "chat", 30)
    h.app.retention.set_policy(h.admin, "billing", 90)
    held = old_chat[:25]
    for run_id in held:
        h.app.retention.hold(h.admin, run_id, reason="litigation 2030-17")
    states = {run_id: h.state(run_id) for run_id in old_chat[20:30] + old_billing[:5]}
    before = per_run_counts(backend)
    due = set(old_chat) - set(held)

    dry = h.app.retention.gc(h.operator, dry_run=True)
    assert per_run_counts(backend) == before
    progress: list[tuple[int, int]] = []
    report = h.app.retention.gc(h.operator, batch=40, progress=lambda d, t: progress.append((d, t)))

    assert report.model_dump(exclude={"dry_run"}) == dry.model_dump(exclude={"dry_run"})
    assert (report.examined, report.compacted, report.held) == (500, 475, 25)
    assert progress[-1] == (475, 475) and len(progress) == 12
    after = per_run_counts(backend)
    for run_id, counts in before.items():
        if run_id in due:
            expected = {"run_events": 0, "run_checkpoints": 1, "run_journal": 1, "run_inbox": 0}
            assert after.get(run_id, dict.fromkeys(RUN_TABLES, 0)) == expected, run_id
        else:
            assert after[run_id] == counts, run_id
    expected_totals = {
        table: sum(c[table] for r, c in before.items() if r not in due) for table in RUN_TABLES
    }
    expected_totals["run_checkpoints"] += len(due)
    expected_totals["run_journal"] += len(due)
    assert totals(backend) == expected_totals
    for table, count in report.deleted.items():
        assert count == sum(before[r][table] for r in due) - sum(after[r][table] for r in due)
    for run_id, state in states.items():
        assert h.state(run_id) == state
    compacted = old_chat[25]
    (effect,) = h.journal(compacted)
    assert (effect.kind.value, effect.status.value, effect.result) == ("effect", "done", None)
    assert effect.idempotency_key.endswith(":send")
    assert h.journal(held[0])[1].result is not None
    assert h.app.retention.gc(h.operator).compacted == 0
    entries = [e for e in h.app.audit.entries(h.admin, limit=10_000) if e.action == "run.retained"]
    assert sum(len(e.details["runs"]) for e in entries) == 475
    hold_entry = next(
        e for e in h.app.audit.entries(h.admin, limit=10_000) if e.action == "run.held"
    )
    assert "litigation" not in str(hold_entry.details)
    assert h.app.notes.read(h.operator, hold_entry.details["reason"]) == "litigation 2030-17"
    assert new_chat and old_billing

    h.app.storage.reclaim_run_space()
    size, reference = sizes_against_kept_rows(h.app, backend, request, tmp_path)
    print(
        f"\n{backend.backend}: after gc + VACUUM {size} bytes; kept rows alone {reference} bytes; "
        f"ratio {size / reference:.3f}"
    )
    assert size <= 1.1 * reference


def _wait_for_no_other_snapshot(conn: Any) -> None:
    """VACUUM FULL keeps the dead rows another open snapshot in the database can still
    see (an autovacuum ANALYZE holds one for a while): wait, up to a minute, until none
    is open, so the size measured is that of the kept rows."""
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL"
    )
    deadline = time.monotonic() + 60
    while conn.execute(query).fetchone()[0] and time.monotonic() < deadline:
        time.sleep(0.2)


def sizes_against_kept_rows(
    app: Tether, backend: TestDatabase, request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[int, int]:
    """The gc'd database's size and that of a fresh one holding only its rows."""
    if backend.backend == "sqlite":
        assert backend.path is not None
        reference = tmp_path / "kept.db"
        fresh, _ = Tether.migrate(url=f"sqlite:///{reference}")
        fresh.close()
        conn = sqlite3.connect(reference, isolation_level=None)
        try:
            conn.execute("ATTACH DATABASE ? AS gc", (str(backend.path),))
            tables = [
                row[0]
                for row in conn.execute(
                    "SELECT name FROM main.sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memory_fts%' "
                    "AND name <> 'tether_schema_versions'"
                )
            ]
            conn.execute("BEGIN")
            conn.execute(
                "DELETE FROM main.tenants WHERE tenant_id NOT IN (SELECT tenant_id FROM gc.tenants)"
            )
            for table in tables:
                conn.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM gc.{table}")
            conn.execute("COMMIT")
            conn.execute("DETACH DATABASE gc")
            conn.execute("VACUUM")
        finally:
            conn.close()
        return backend.path.stat().st_size, reference.stat().st_size
    server: PostgresServer = request.getfixturevalue("postgres_server")
    template: str = request.getfixturevalue("postgres_template")
    name = server.create_database(template=template)
    try:
        import psycopg

        assert backend.admin_url is not None
        with (
            psycopg.connect(backend.admin_url, autocommit=True) as source,
            psycopg.connect(server.url(name), autocommit=True) as target,
        ):
            target.execute(
                "INSERT INTO tenants (tenant_id, name, created_at, created_by) "
                "VALUES (%s, 'acme', now(), 'test')",
                (TENANT,),
            )
            for table in SIZE_TABLES:
                columns = [
                    r[0]
                    for r in source.execute(
                        "SELECT column_name FROM information_schema.columns "
                        "WHERE table_schema = current_schema() AND table_name = %s",
                        (table,),
                    )
                ]
                listed = ", ".join(columns)
                with (
                    source.cursor().copy(f"COPY {table} ({listed}) TO STDOUT") as out,
                    target.cursor().copy(f"COPY {table} ({listed}) FROM STDIN") as into,
                ):
                    for chunk in out:
                        into.write(chunk)
            _wait_for_no_other_snapshot(source)
            for conn in (source, target):
                for table in SIZE_TABLES:
                    conn.execute(f"VACUUM (FULL, ANALYZE) {table}")
            measure = "SELECT SUM(pg_total_relation_size(t::regclass)) FROM unnest(%s::text[]) t"
            size = int(source.execute(measure, (list(SIZE_TABLES),)).fetchone()[0])  # type: ignore[index]
            kept = int(target.execute(measure, (list(SIZE_TABLES),)).fetchone()[0])  # type: ignore[index]
        return size, kept
    finally:
        server.drop_database(name)


def test_holds_and_gc_need_their_role_and_a_reason(h: Harness) -> None:
    (run_id,) = start_and_finish(h, workflow("chat"), 1)
    with pytest.raises(InvalidInput, match="needs a reason"):
        h.app.retention.hold(h.admin, run_id, reason="  ")
    with pytest.raises(PermissionDenied):
        h.app.retention.hold(h.operator, run_id, reason="audit")
    with pytest.raises(PermissionDenied):
        h.app.retention.gc(h.viewer)
    with pytest.raises(PermissionDenied):
        h.app.retention.set_policy(h.operator, "chat", 1)
    h.app.retention.hold(h.admin, run_id, reason="audit")
    with pytest.raises(InvalidInput, match="needs a reason"):
        h.app.retention.release(h.admin, run_id, reason="")
    assert h.app.retention.release(h.admin, run_id, reason="case closed") == 1
    actions = [e.action for e in h.app.audit.entries(h.admin, limit=1000)]
    assert actions[-2:] == ["run.held", "run.hold_released"]
    held, released = h.events(run_id)[-2:]
    assert (held.type, released.type) == ("run.held", "run.hold_released")
    assert held.data["reason"].startswith("note:") and "audit" not in str(held.data)
    assert released.data["by"] == h.admin.principal_id
    digest = h.app.audit.entries(h.admin, limit=1000)[-1].details["reason"]
    h.app.notes.erase(h.admin, digest)
    assert h.app.audit.verify(TENANT).ok
