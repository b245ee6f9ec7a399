"""``tether demo``: what Tether does today, end to end, on a fresh SQLite database.

Migrates a new database, creates two tenants with principals, writes an audit trail that
mentions a data subject, verifies the chain, shows that the subject's id is nowhere in the
database file, then tampers with a copy of the file and shows `verify` naming the entry.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.table import Table

from tether.app import Tether
from tether.cli._common import console, reporting, say_database
from tether.config import load_settings

SUBJECT = "patient-4711"


def demo(
    directory: Annotated[
        Path, typer.Option("--dir", help="Folder for the demo database (made if missing).")
    ] = Path("demo-output"),
) -> None:
    """Run the demo on a fresh SQLite database in --dir (replacing an earlier demo's)."""
    with reporting():
        directory.mkdir(parents=True, exist_ok=True)
        db_path = (directory / "tether-demo.db").resolve()
        for leftover in directory.glob("tether-demo*.db*"):
            leftover.unlink()
        settings = load_settings(url=f"sqlite:///{db_path}")
        say_database(settings.database.display)

        console.rule("1. migrate a fresh database")
        app, applied = Tether.migrate(settings)
        for migration in applied:
            console.print(f"applied {migration.component} {migration.version:04d}_{migration.name}")

        with app:
            console.rule("2. tenants and principals")
            app.tenants.create("acme", name="Acme Insurance", admin="alice")
            app.tenants.create("globex", name="Globex", admin="gina")
            alice = app.tenants.principal("acme", "alice")
            app.tenants.grant(alice, "sam", ["approver"])
            app.tenants.grant(alice, "case-agent", ["agent"])
            for record in app.tenants.principals(alice):
                console.print(f"acme/{record.principal_id}: {', '.join(record.roles)}")

            console.rule("3. an audit trail that concerns a person")
            with app.storage.transaction("acme") as txn:
                app.audit.record_txn(
                    txn,
                    tenant_id="acme",
                    actor_id="case-agent",
                    action="case.reviewed",
                    target="case:C-1001",
                    details={"outcome": "needs evidence"},
                    subjects=[SUBJECT],
                )
                app.audit.record_txn(
                    txn,
                    tenant_id="acme",
                    actor_id="sam",
                    action="approval.granted",
                    target="case:C-1001",
                    details={"decision": "approve"},
                    subjects=[SUBJECT],
                )
            table = Table("#", "actor", "action", "target", "subject hashes", "hash")
            for entry in app.audit.entries(alice):
                table.add_row(
                    str(entry.seq),
                    entry.actor_id,
                    entry.action,
                    entry.target,
                    ", ".join(h[:12] + "…" for h in entry.subject_hashes) or "-",
                    entry.entry_hash[:12] + "…",
                )
            console.print(table)

            console.rule("4. verify the chains")
            failures = 0
            for tenant in ("acme", "globex"):
                report = app.audit.verify(tenant)
                console.print(f"{tenant}: {report.entries_checked} entries, intact={report.ok}")
                failures += not report.ok

        console.rule("5. the subject's id is stored only as a keyed hash")
        check = sqlite3.connect(db_path)
        check.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        check.close()
        raw = b"".join(p.read_bytes() for p in directory.glob("tether-demo.db*"))
        leaked = SUBJECT.encode() in raw
        console.print(
            f"bytes of {SUBJECT!r} in the database files: {'FOUND' if leaked else 'none'}"
        )

        console.rule("6. tamper with a copy and verify again")
        copy = directory / "tether-demo-tampered.db"
        shutil.copy(db_path, copy)
        raw_db = sqlite3.connect(copy)
        raw_db.execute("DROP TRIGGER audit_log_no_update")
        raw_db.execute(
            'UPDATE audit_log SET details = \'{"decision":"reject"}\' '
            "WHERE tenant_id = 'acme' AND action = 'approval.granted'"
        )
        raw_db.commit()
        raw_db.close()
        with Tether.open(load_settings(url=f"sqlite:///{copy.resolve()}")) as tampered:
            report = tampered.audit.verify("acme")
        detected = report.problem is not None
        console.print(
            Panel(
                report.problem.message if report.problem else "NOT DETECTED",
                title="tether audit verify (tampered copy)",
            )
        )

        if failures or leaked or not detected:
            console.print("demo failed")
            raise typer.Exit(1)
        console.print(
            f"demo ok: try `tether audit ls --tenant acme --url sqlite:///{db_path}`",
            highlight=False,
        )
