"""The hash chain's pure functions, on synthetic rows (no database)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from tether import canonical
from tether.audit.chain import GENESIS, VerifyReport, entry_hash, legacy_hash, verify_chain
from tether.keys import Keyring
from tether.storage.base import AuditRow

START = datetime(2030, 1, 1, tzinfo=UTC)
KEYRING = Keyring(b"unit test master key")


def make_chain(length: int, tenant_id: str = "acme") -> list[AuditRow]:
    rows: list[AuditRow] = []
    previous = GENESIS
    for seq in range(1, length + 1):
        unsigned = AuditRow(
            tenant_id=tenant_id,
            seq=seq,
            entry_id=str(uuid.UUID(int=seq)),
            at=START + timedelta(seconds=seq),
            actor_id="alice",
            action="case.reviewed",
            target=f"case:C-{seq}",
            details_json=canonical.dumps({"number": seq}),
            subjects_json=canonical.dumps([]),
            prev_hash=previous,
            entry_hash="",
        )
        row = dataclasses.replace(unsigned, entry_hash=entry_hash(unsigned, KEYRING))
        rows.append(row)
        previous = row.entry_hash
    return rows


def verify(rows: list[AuditRow], original: list[AuditRow]) -> VerifyReport:
    """Verify ``rows`` (as read back, in seq order) against the head ``original`` ended at."""
    head_seq = original[-1].seq if original else 0
    head_hash = original[-1].entry_hash if original else GENESIS
    ordered = sorted(rows, key=lambda row: row.seq)
    return verify_chain("acme", ordered, head_seq=head_seq, head_hash=head_hash, keyring=KEYRING)


def swap_seq(rows: list[AuditRow], first: int, second: int) -> list[AuditRow]:
    """What swapping two entries' seq values in the table looks like when read back."""
    swapped = []
    for row in rows:
        if row.seq == first:
            row = dataclasses.replace(row, seq=second)
        elif row.seq == second:
            row = dataclasses.replace(row, seq=first)
        swapped.append(row)
    return swapped


def test_intact_chain_verifies() -> None:
    chain = make_chain(5)

    report = verify(chain, chain)

    assert report.ok
    assert report.problem is None
    assert report.entries_checked == 5
    assert report.head_seq == 5


def test_empty_trail_verifies() -> None:
    assert verify([], []).ok


def test_first_entry_links_to_genesis_and_each_next_to_its_predecessor() -> None:
    chain = make_chain(3)

    assert chain[0].prev_hash == GENESIS
    assert [row.prev_hash for row in chain[1:]] == [row.entry_hash for row in chain[:-1]]


def test_hash_depends_on_content_and_predecessor_but_not_on_seq() -> None:
    row = make_chain(1)[0]

    assert entry_hash(dataclasses.replace(row, seq=99), KEYRING) == row.entry_hash
    assert entry_hash(dataclasses.replace(row, prev_hash="x"), KEYRING) != row.entry_hash


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("details_json", canonical.dumps({"number": 999})),
        ("actor_id", "mallory"),
        ("action", "case.closed"),
        ("target", "case:C-999"),
        ("at", START + timedelta(days=1)),
        ("subjects_json", canonical.dumps(["f" * 64])),
        ("entry_id", str(uuid.UUID(int=999))),
        ("tenant_id", "globex"),
    ],
)
def test_edited_entry_is_named(field: str, value: object) -> None:
    chain = make_chain(5)
    tampered = list(chain)
    tampered[2] = dataclasses.replace(chain[2], **{field: value})

    report = verify(tampered, chain)

    assert not report.ok
    assert report.problem is not None
    assert report.problem.kind == "edited"
    assert report.problem.seq == 3
    assert report.problem.entry_id == tampered[2].entry_id
    assert "entry #3" in report.problem.message


def test_edited_entry_with_a_recomputed_hash_breaks_the_next_link() -> None:
    chain = make_chain(5)
    forged = dataclasses.replace(chain[2], details_json=canonical.dumps({"number": 999}))
    forged = dataclasses.replace(forged, entry_hash=entry_hash(forged, KEYRING))
    tampered = [*chain[:2], forged, *chain[3:]]

    report = verify(tampered, chain)

    assert report.problem is not None
    assert report.problem.seq == 4
    assert report.problem.entry_id == chain[3].entry_id
    assert "removed or replaced" in report.problem.message


@pytest.mark.parametrize("deleted", [2, 3, 4])
def test_missing_middle_entry_is_named(deleted: int) -> None:
    chain = make_chain(5)
    tampered = [row for row in chain if row.seq != deleted]

    report = verify(tampered, chain)

    assert report.problem is not None
    assert report.problem.kind == "missing"
    assert report.problem.seq == deleted
    assert f"entry #{deleted} is missing" in report.problem.message
    assert f"#{deleted + 1}" in report.problem.message


def test_missing_first_entry_is_named() -> None:
    chain = make_chain(3)

    report = verify(chain[1:], chain)

    assert report.problem is not None
    assert report.problem.kind == "missing"
    assert report.problem.seq == 1


def test_missing_entry_with_later_ones_renumbered_is_caught() -> None:
    chain = make_chain(5)
    renumbered = [
        *chain[:2],
        *(dataclasses.replace(row, seq=row.seq - 1) for row in chain[3:]),
    ]

    report = verify(renumbered, chain)

    assert report.problem is not None
    assert report.problem.kind == "missing"
    assert report.problem.seq == 3
    assert report.problem.entry_id == chain[3].entry_id


@pytest.mark.parametrize(("first", "second"), [(2, 3), (1, 2), (4, 5), (2, 4)])
def test_swapped_entries_are_reported_as_reordered(first: int, second: int) -> None:
    chain = make_chain(5)

    report = verify(swap_seq(chain, first, second), chain)

    assert report.problem is not None
    assert report.problem.kind == "reordered"
    assert report.problem.seq == first
    # The entry now sitting at ``first`` is the one originally written at ``second``.
    assert report.problem.entry_id == chain[second - 1].entry_id
    assert f"entry #{first}" in report.problem.message
    assert "out of order" in report.problem.message


@pytest.mark.parametrize("removed", [1, 2])
def test_truncated_tail_is_named(removed: int) -> None:
    chain = make_chain(5)

    report = verify(chain[:-removed], chain)

    assert report.problem is not None
    assert report.problem.kind == "truncated"
    assert report.problem.seq == 5 - removed + 1
    assert report.problem.entry_id is None
    assert f"ends at entry #{5 - removed}" in report.problem.message
    assert "#5" in report.problem.message


def test_trail_deleted_entirely_is_truncated() -> None:
    chain = make_chain(3)

    report = verify([], chain)

    assert report.problem is not None
    assert report.problem.kind == "truncated"
    assert report.problem.seq == 1


def test_last_entry_replaced_with_a_recomputed_hash_is_named() -> None:
    chain = make_chain(3)
    forged = dataclasses.replace(chain[2], actor_id="mallory")
    forged = dataclasses.replace(forged, entry_hash=entry_hash(forged, KEYRING))

    report = verify([*chain[:2], forged], chain)

    assert report.problem is not None
    assert report.problem.seq == 3
    assert report.problem.entry_id == forged.entry_id
    # The trail still has all three entries: nothing was removed from the end.
    assert "removed from the end" not in report.problem.message


def test_the_first_of_several_problems_is_reported() -> None:
    chain = make_chain(6)
    tampered = [row for row in chain if row.seq != 5]
    tampered[1] = dataclasses.replace(tampered[1], details_json="{}")

    report = verify(tampered, chain)

    assert report.problem is not None
    assert report.problem.kind == "edited"
    assert report.problem.seq == 2


def legacy_chain(length: int) -> list[AuditRow]:
    """A chain as written before keys existed: plain SHA-256 links."""
    rows: list[AuditRow] = []
    previous = GENESIS
    for row in make_chain(length):
        unsigned = dataclasses.replace(row, prev_hash=previous, entry_hash="")
        row = dataclasses.replace(unsigned, entry_hash=legacy_hash(unsigned))
        rows.append(row)
        previous = row.entry_hash
    return rows


def append(rows: list[AuditRow], sign: Callable[[AuditRow], str]) -> list[AuditRow]:
    unsigned = dataclasses.replace(
        make_chain(len(rows) + 1)[-1], prev_hash=rows[-1].entry_hash, entry_hash=""
    )
    return [*rows, dataclasses.replace(unsigned, entry_hash=sign(unsigned))]


def test_keyed_entries_name_the_key_they_were_made_with() -> None:
    chain = make_chain(2)

    assert all(row.entry_hash.startswith(f"hmac-sha256:{KEYRING.current_id}:") for row in chain)
    assert verify(chain, chain).ok


def test_an_unkeyed_trail_sealed_by_a_keyed_entry_verifies() -> None:
    sealed = append(legacy_chain(4), lambda row: entry_hash(row, KEYRING))

    assert verify(sealed, sealed).ok


def test_an_unkeyed_trail_without_a_seal_is_reported() -> None:
    chain = legacy_chain(4)

    report = verify(chain, chain)

    assert report.problem is not None
    assert report.problem.kind == "forged"
    assert report.problem.seq == 4


@pytest.mark.parametrize(
    "sign",
    [
        legacy_hash,
        lambda row: entry_hash(row, Keyring(b"the attacker's own key")),
        lambda row: entry_hash(row, Keyring(b"the attacker's own key")).replace(
            Keyring(b"the attacker's own key").current_id, KEYRING.current_id
        ),
    ],
    ids=["plain-sha256", "own-key", "own-key-under-our-key-id"],
)
def test_an_entry_appended_without_the_key_is_named(sign: Callable[[AuditRow], str]) -> None:
    forged = append(make_chain(3), sign)

    report = verify(forged, forged)

    assert report.problem is not None
    assert report.problem.kind in {"forged", "edited"}
    assert report.problem.seq == 4


def test_a_retired_key_still_verifies_what_it_signed() -> None:
    old = make_chain(3)
    rotated = Keyring(b"the next master key", (KEYRING.master,))
    chain = append(old, lambda row: entry_hash(row, rotated))

    report = verify_chain(
        "acme", chain, head_seq=4, head_hash=chain[-1].entry_hash, keyring=rotated
    )
    without_old = verify_chain(
        "acme",
        chain,
        head_seq=4,
        head_hash=chain[-1].entry_hash,
        keyring=Keyring(b"the next master key"),
    )

    assert report.ok
    assert without_old.problem is not None
    assert without_old.problem.seq == 1
    assert "does not hold" in without_old.problem.message
