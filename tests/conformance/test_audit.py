"""The audit trail on every backend: written, read back, verified, and tampered with.

Tampering goes around Tether, straight to the database, the way an attacker with access
to the file or a superuser login would; verification must then name what was done.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from tests.support import RawConnection, TestDatabase, auditor, record
from tether import FakeClock, Tether
from tether.audit.log import AuditLog
from tether.errors import InvalidInput, TetherError
from tether.keys import Keyring

START = datetime(2030, 3, 1, 9, 0, tzinfo=UTC)
SUBJECT = "patient-4711"
OTHER_SUBJECT = "patient-0815"


@pytest.fixture
def acme(app: Tether) -> Tether:
    """Tenant acme with six entries (creation, its admin, four reviews); globex beside it."""
    app.tenants.create("acme", admin="alice")
    app.tenants.create("globex", admin="gina")
    record(app, "acme", 4)
    record(app, "globex", 2, actor="gina")
    return app


def entry_ids(raw: RawConnection) -> dict[int, str]:
    return {seq: raw.entry_id("acme", seq) for seq in raw.audit_seqs("acme")}


def test_recorded_entries_read_back_in_order(backend: TestDatabase) -> None:
    clock = FakeClock(START)
    with Tether.open(backend.settings(), clock=clock) as app:
        app.tenants.create("acme", admin="alice")
        with app.storage.transaction("acme") as txn:
            written = app.audit.record_txn(
                txn,
                tenant_id="acme",
                actor_id="alice",
                action="case.reviewed",
                target="case:C-1001",
                details={"outcome": "needs evidence", "score": 0.5, "tags": ["a", "b"]},
            )
        clock.advance(timedelta(minutes=5))
        record(app, "acme", 3)

        entries = app.audit.entries(auditor("acme"))

    assert [entry.seq for entry in entries] == [1, 2, 3, 4, 5, 6]
    assert entries[2] == written
    assert entries[2].details == {"outcome": "needs evidence", "score": 0.5, "tags": ["a", "b"]}
    assert entries[2].at == START
    assert entries[3].at == START + timedelta(minutes=5)
    assert entries[0].prev_hash == ""
    assert all(later.prev_hash == earlier.entry_hash for earlier, later in pairwise(entries))
    assert len({entry.entry_id for entry in entries}) == 6


def test_entries_page_by_sequence(acme: Tether) -> None:
    first = acme.audit.entries(auditor("acme"), limit=4)
    rest = acme.audit.entries(auditor("acme"), after_seq=first[-1].seq, limit=4)

    assert [entry.seq for entry in first] == [1, 2, 3, 4]
    assert [entry.seq for entry in rest] == [5, 6]
    assert all(entry.tenant_id == "acme" for entry in first + rest)


def test_intact_trail_verifies(acme: Tether) -> None:
    report = acme.audit.verify("acme")

    assert report.ok
    assert report.problem is None
    assert report.entries_checked == 6
    assert report.head_seq == 6
    assert acme.tenants.get("acme").audit_entries == 6


def test_new_tenant_without_entries_verifies(app: Tether) -> None:
    app.tenants.create("quiet")

    report = app.audit.verify("quiet")

    assert report.ok
    assert report.entries_checked == 1


def test_entry_in_a_failed_transaction_is_not_kept(acme: Tether) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), acme.storage.transaction("acme") as txn:
        acme.audit.record_txn(
            txn, tenant_id="acme", actor_id="alice", action="case.closed", target="case:1"
        )
        raise Boom

    assert len(acme.audit.entries(auditor("acme"))) == 6
    assert acme.audit.verify("acme").ok


def test_malformed_action_is_refused_and_nothing_written(acme: Tether) -> None:
    with (
        pytest.raises(InvalidInput, match="dotted lowercase"),
        acme.storage.transaction("acme") as txn,
    ):
        acme.audit.record_txn(
            txn, tenant_id="acme", actor_id="alice", action="Closed Case", target="case:1"
        )

    assert len(acme.audit.entries(auditor("acme"))) == 6


def test_edited_entry_is_named(acme: Tether, backend: TestDatabase) -> None:
    with backend.raw() as raw:
        ids = entry_ids(raw)
        raw.bypass_append_only()
        raw.execute(
            "UPDATE audit_log SET details = ? WHERE tenant_id = ? AND seq = ?",
            ['{"number":999}', "acme", 3],
        )

    report = acme.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.kind == "edited"
    assert report.problem.seq == 3
    assert report.problem.entry_id == ids[3]
    assert "entry #3" in report.problem.message
    assert acme.audit.verify("globex").ok


def test_deleted_middle_entry_is_named(acme: Tether, backend: TestDatabase) -> None:
    with backend.raw() as raw:
        raw.bypass_append_only()
        raw.execute("DELETE FROM audit_log WHERE tenant_id = ? AND seq = ?", ["acme", 3])

    report = acme.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.kind == "missing"
    assert report.problem.seq == 3
    assert "entry #3 is missing" in report.problem.message
    assert acme.audit.verify("globex").ok


def test_swapped_entries_are_named_as_reordered(acme: Tether, backend: TestDatabase) -> None:
    with backend.raw() as raw:
        ids = entry_ids(raw)
        raw.bypass_append_only()
        swap = "UPDATE audit_log SET seq = ? WHERE tenant_id = ? AND seq = ?"
        raw.execute(swap, [-1, "acme", 3])
        raw.execute(swap, [3, "acme", 4])
        raw.execute(swap, [4, "acme", -1])

    report = acme.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.kind == "reordered"
    assert report.problem.seq == 3
    assert report.problem.entry_id == ids[4]
    assert "entry #3" in report.problem.message
    assert acme.audit.verify("globex").ok


def test_deleted_last_entry_is_named_as_truncated(acme: Tether, backend: TestDatabase) -> None:
    with backend.raw() as raw:
        raw.bypass_append_only()
        raw.execute("DELETE FROM audit_log WHERE tenant_id = ? AND seq = ?", ["acme", 6])

    report = acme.audit.verify("acme")

    assert report.problem is not None
    assert report.problem.kind == "truncated"
    assert report.problem.seq == 6
    assert "ends at entry #5" in report.problem.message
    assert acme.audit.verify("globex").ok


def test_tampering_beyond_the_first_batch_is_named(app: Tether, backend: TestDatabase) -> None:
    app.tenants.create("acme")
    record(app, "acme", 1_100)
    assert app.audit.verify("acme").entries_checked == 1_101

    with backend.raw() as raw:
        raw.bypass_append_only()
        raw.execute(
            "UPDATE audit_log SET actor_id = ? WHERE tenant_id = ? AND seq = ?",
            ["mallory", "acme", 1_050],
        )

    report = app.audit.verify("acme")
    assert report.problem is not None
    assert (report.problem.kind, report.problem.seq) == ("edited", 1_050)
    assert report.entries_checked == 1_050


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_log SET details = '{}' WHERE tenant_id = 'acme'",
        "DELETE FROM audit_log WHERE tenant_id = 'acme' AND seq = 6",
    ],
    ids=["update", "delete"],
)
@pytest.mark.parametrize("system", [False, True], ids=["tenant-txn", "system-txn"])
def test_audit_log_is_append_only_for_the_application(
    acme: Tether, statement: str, system: bool
) -> None:
    before = acme.audit.entries(auditor("acme"))

    opened = acme.storage.system_transaction() if system else acme.storage.transaction("acme")
    with pytest.raises(TetherError), opened as txn:
        txn.connection.execute(statement)

    assert acme.audit.entries(auditor("acme")) == before
    assert acme.audit.verify("acme").ok


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_log SET details = '{}' WHERE tenant_id = 'acme'",
        "DELETE FROM audit_log WHERE tenant_id = 'acme'",
    ],
    ids=["update", "delete"],
)
def test_audit_log_refuses_changes_even_from_the_database_owner(
    acme: Tether, backend: TestDatabase, statement: str
) -> None:
    before = acme.audit.entries(auditor("acme"))

    with backend.raw() as raw, pytest.raises(Exception, match="append-only"):
        raw.execute(statement)

    assert acme.audit.entries(auditor("acme")) == before


def test_subject_ids_are_stored_only_as_keyed_hashes(acme: Tether) -> None:
    with acme.storage.transaction("acme") as txn:
        entry = acme.audit.record_txn(
            txn,
            tenant_id="acme",
            actor_id="alice",
            action="case.reviewed",
            target="case:C-1001",
            subjects=[SUBJECT, OTHER_SUBJECT, SUBJECT],
        )

    expected = sorted(
        {acme.audit.subject_hash("acme", SUBJECT), acme.audit.subject_hash("acme", OTHER_SUBJECT)}
    )
    assert entry.subject_hashes == expected
    assert acme.audit.entries(auditor("acme"))[-1].subject_hashes == expected
    assert SUBJECT not in repr(acme.audit.entries(auditor("acme")))


def test_subject_hashes_differ_between_tenants_and_keys(backend: TestDatabase) -> None:
    with backend.open() as app:
        in_acme = app.audit.subject_hash("acme", SUBJECT)
        in_globex = app.audit.subject_hash("globex", SUBJECT)
    with backend.open() as reopened:
        again = reopened.audit.subject_hash("acme", SUBJECT)
    with backend.open() as app:
        other_key = AuditLog(app.storage, app.clock, app.ids, Keyring(b"another master key!"))
        with_key = other_key.subject_hash("acme", SUBJECT)

    assert in_acme != in_globex
    assert again == in_acme
    assert with_key != in_acme
    assert SUBJECT not in in_acme


def test_subject_ids_never_appear_as_text_in_the_database(
    acme: Tether, backend: TestDatabase
) -> None:
    with acme.storage.transaction("acme") as txn:
        acme.audit.record_txn(
            txn,
            tenant_id="acme",
            actor_id="alice",
            action="case.reviewed",
            target="case:C-1001",
            details={"outcome": "needs evidence"},
            subjects=[SUBJECT, OTHER_SUBJECT],
        )
        acme.audit.record_txn(
            txn,
            tenant_id="acme",
            actor_id="sam",
            action="approval.granted",
            target="case:C-1001",
            subjects=[SUBJECT],
        )

    stored = stored_text(backend)

    assert "case:C-1001" in stored  # the check does see what was written
    assert acme.audit.subject_hash("acme", SUBJECT) in stored
    assert SUBJECT not in stored
    assert OTHER_SUBJECT not in stored


def stored_text(backend: TestDatabase) -> str:
    """Everything the database holds, as text: raw file bytes, or every row of every table."""
    if backend.backend == "sqlite":
        assert backend.path is not None
        with backend.raw() as raw:
            busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")[0]
            assert busy == 0
        files = sorted(backend.path.parent.glob(backend.path.name + "*"))
        return b"".join(path.read_bytes() for path in files).decode("latin-1")
    with backend.raw() as raw:
        tables = [
            row[0]
            for row in raw.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        assert "audit_log" in tables
        texts = [
            str(row[0])
            for table in tables
            for row in raw.execute(f'SELECT t::text FROM "{table}" t')
        ]
    return "\n".join(texts)


def test_concurrent_writers_keep_one_unbroken_chain(backend: TestDatabase) -> None:
    with backend.open() as app:
        app.tenants.create("acme", admin="alice")
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with backend.open() as writer:
                for _ in range(10):
                    record(writer, "acme", 2)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    with backend.open() as app:
        report = app.audit.verify("acme")
        assert report.ok, report.problem
        assert report.entries_checked == 2 + 4 * 10 * 2


def test_verify_while_another_process_writes_reports_no_false_tampering(
    backend: TestDatabase,
) -> None:
    with backend.open() as app:
        app.tenants.create("acme", admin="alice")
        record(app, "acme", 200)
    done = threading.Event()
    errors: list[BaseException] = []

    def keep_writing() -> None:
        try:
            with backend.open() as writer:
                while not done.is_set():
                    record(writer, "acme", 1)
        except BaseException as exc:
            errors.append(exc)

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        with backend.open() as app:
            problems = [app.audit.verify("acme").problem for _ in range(40)]
    finally:
        done.set()
        writer.join()

    assert errors == []
    assert [problem for problem in problems if problem is not None] == []
