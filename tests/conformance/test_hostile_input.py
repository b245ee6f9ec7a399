"""Hostile input on every backend: a clear ``invalid_input`` naming the field, nothing changed.

Each test plays a careless user or an attacker against the public API: text with lone
surrogates or NUL characters, numbers out of range or not finite, JSON nested without
end, limits and durations below zero, unknown statuses. Both backends must refuse the
same values the same way, before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.hostile_support import HOSTILE_NUMBERS, HOSTILE_TEXTS, database_rows, nested
from tests.memory_support import create_tenant, postgres_database, propose, read_pages
from tests.support import TestDatabase, auditor
from tether import Tether
from tether.errors import InvalidInput
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType
from tether.principals import Principal
from tether.runs import END, RunContext, Workflow
from tether.threads.models import NewTurn, TurnRole

TENANT = "acme"


class Notes(BaseModel):
    notes: dict[str, Any] = {}
    score: float = 0.0


def notes_workflow() -> Workflow[Notes]:
    wf: Workflow[Notes] = Workflow("notes", state=Notes)

    @wf.node
    def only(ctx: RunContext, s: Notes) -> str:
        return END

    return wf


@pytest.fixture
def cast(app: Tether) -> dict[str, Principal]:
    return create_tenant(app, TENANT)


def refuses(
    backend: TestDatabase, call: Callable[[], object], *, field: str | None = None
) -> InvalidInput:
    """``call`` raises InvalidInput (naming ``field``) and leaves every table unchanged."""
    before = database_rows(backend)
    with pytest.raises(InvalidInput) as caught:
        call()
    if field is not None:
        assert field in caught.value.message
    assert database_rows(backend) == before
    return caught.value


@pytest.fixture
def seeded(app: Tether, cast: dict[str, Principal]) -> Iterator[dict[str, str]]:
    memory = propose(app, cast["olga"], "prefers email", Scope.USER, "u-1").memory_id
    thread = app.threads.create(cast["olga"], "u-1", title="support").thread_id
    assert memory is not None
    yield {"memory": memory, "thread": thread}


@pytest.mark.parametrize("kind", sorted(HOSTILE_TEXTS))
def test_hostile_text_is_refused_everywhere_and_changes_nothing(
    app: Tether,
    backend: TestDatabase,
    cast: dict[str, Principal],
    seeded: dict[str, str],
    kind: str,
) -> None:
    text = HOSTILE_TEXTS[kind]
    olga, alice = cast["olga"], cast["alice"]
    calls: dict[str, Callable[[], object]] = {
        "query": lambda: app.memory.recall(olga, text, [(Scope.USER, "u-1")]),
        "memory_id": lambda: app.memory.get(olga, text),
        "user_id": lambda: app.subjects.export(alice, text),
        "title": lambda: app.threads.create(olga, "u-1", title=text),
        "key": lambda: app.working.set(auditor(TENANT), "s-1", text, 1),
        "value": lambda: app.working.set(auditor(TENANT), "s-1", "k", {"note": text}),
        "turn": lambda: app.threads.append(
            olga, seeded["thread"], NewTurn(role=TurnRole.USER, content=text[:100_000])
        ),
        "reason": lambda: app.memory.place_hold(alice, Scope.USER, "u-1", text),
        "answer": lambda: app.runs.answer(olga, "0" * 8, {"a": text}),
        "state": lambda: app.runs.start(olga, notes_workflow(), {"notes": {"a": text}}),
    }
    if kind == "too long":
        del calls["turn"]  # a turn longer than a megabyte is refused by its own limit
    for name, call in calls.items():
        error = refuses(backend, call)
        assert name.split("_")[0] in error.message or kind == "too long", (name, error.message)


def test_nul_in_a_memory_text_is_refused_on_both_backends(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    refuses(
        backend,
        lambda: propose(app, cast["olga"], "a\x00b", Scope.USER, "u-1"),
        field="NUL",
    )


@pytest.mark.parametrize("kind", sorted(HOSTILE_NUMBERS))
def test_out_of_range_and_non_finite_numbers_are_refused(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal], kind: str
) -> None:
    number = HOSTILE_NUMBERS[kind]
    olga = cast["olga"]
    refuses(backend, lambda: app.working.set(auditor(TENANT), "s-1", "k", number), field="value")
    refuses(
        backend,
        lambda: app.runs.start(olga, notes_workflow(), {"notes": {"n": number}}),
        field="state",
    )
    refuses(backend, lambda: app.runs.start(olga, notes_workflow(), {"score": number}))
    refuses(backend, lambda: app.runs.all(olga, limit=number))  # type: ignore[arg-type]
    refuses(backend, lambda: app.threads.turns(olga, "t", from_seq=number))  # type: ignore[arg-type]


def test_nan_in_run_state_is_refused_not_stored_as_null(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    error = refuses(
        backend, lambda: app.runs.start(cast["olga"], notes_workflow(), Notes(score=float("nan")))
    )
    assert "finite" in error.message


def test_deep_nesting_is_refused(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    deep = nested(10_000)
    refuses(backend, lambda: app.working.set(auditor(TENANT), "s-1", "k", deep), field="nested")
    refuses(
        backend,
        lambda: app.runs.start(cast["olga"], notes_workflow(), {"notes": {"d": deep}}),
        field="nested",
    )


def test_limits_durations_and_statuses_are_checked(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    olga = cast["olga"]
    refuses(backend, lambda: app.runs.all(olga, limit=-1), field="limit")
    refuses(backend, lambda: app.runs.all(olga, limit=0), field="limit")
    refuses(backend, lambda: app.runs.all(olga, status="bogus"), field="status")
    refuses(backend, lambda: app.memory.retention_cycle(olga, decay_after_days=-1))
    refuses(backend, lambda: app.memory.retention_cycle(olga, decay_after_days=0))
    refuses(backend, lambda: app.working.set(auditor(TENANT), "s", "k", 1, ttl_s=-5), field="ttl_s")
    refuses(backend, lambda: app.working.set(auditor(TENANT), "s", "k", 1, ttl_s=float("nan")))
    refuses(backend, lambda: app.threads.all(olga, limit=10**30))
    refuses(backend, lambda: app.audit.entries(auditor(TENANT), limit=-3), field="limit")
    refuses(backend, lambda: app.memory.reembed(olga, batch=0), field="batch")
    refuses(
        backend,
        lambda: app.memory.recall(olga, "x", [(Scope.USER, "u-1")], min_confidence=2.0),
        field="min_confidence",
    )
    refuses(backend, lambda: app.memory.recall(olga, "x", [("bogus", "u-1")]), field="scopes")
    refuses(
        backend,
        lambda: app.memory.recall(olga, "x", [(Scope.USER, "u-1")], kinds=["bogus"]),  # type: ignore[list-item]
        field="kinds",
    )
    refuses(backend, lambda: app.subjects.erase(cast["alice"], " "), field="user_id")
    refuses(backend, lambda: app.threads.create(olga, ""), field="user_id")


def test_retention_with_a_negative_day_count_expires_nothing(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    decision = propose(app, cast["olga"], "likes tea", Scope.USER, "u-1")
    with pytest.raises(InvalidInput, match="decay_after_days"):
        app.memory.retention_cycle(cast["olga"], decay_after_days=-1)
    assert decision.memory_id is not None
    assert app.memory.get(cast["olga"], decision.memory_id).status.value == "active"


def test_approving_a_held_proposal_supersedes_the_active_version_of_its_fact(
    app: Tether, cast: dict[str, Principal]
) -> None:
    first = propose(app, cast["olga"], "The CEO is Ann", Scope.TENANT, TENANT, fact_key="ceo")
    held = propose(app, cast["agent"], "The CEO is Bob", Scope.TENANT, TENANT, fact_key="ceo")
    assert held.verdict.value == "held"
    assert first.memory_id is not None and held.memory_id is not None

    app.memory.approve(cast["sam"], held.memory_id)

    versions = app.memory.history(cast["olga"], held.memory_id)
    assert [v.status.value for v in versions] == ["superseded", "active"]
    assert versions[0].superseded_by == held.memory_id
    hits = app.memory.recall(cast["olga"], "CEO", [(Scope.TENANT, TENANT)]).hits
    assert [hit.record.text for hit in hits] == ["The CEO is Bob"]


def test_a_near_duplicate_about_another_person_is_its_own_record(
    app: Tether, cast: dict[str, Principal]
) -> None:
    text = "Prefers to be contacted by email in the morning about the claim"
    one = propose(app, cast["olga"], text, Scope.CASE, "C-1", subjects=["u-1"])
    two = propose(app, cast["olga"], text, Scope.CASE, "C-1", subjects=["u-2"])

    assert two.action == "created"
    assert two.memory_id != one.memory_id
    exported = app.subjects.export(cast["alice"], "u-2")
    assert [m["memory_id"] for m in exported["memories"]] == [two.memory_id]
    assert app.subjects.erase(cast["alice"], "u-2")["memories"] == 1
    assert one.memory_id is not None
    assert app.memory.get(cast["olga"], one.memory_id).subjects == ["u-1"]


def test_a_twin_about_the_same_person_still_reinforces(
    app: Tether, cast: dict[str, Principal]
) -> None:
    text = "Prefers to be contacted by email in the morning about the claim"
    one = propose(app, cast["olga"], text, Scope.CASE, "C-1", subjects=["u-1"])
    two = propose(app, cast["olga"], text, Scope.CASE, "C-1", subjects=["u-1"])
    assert (two.action, two.memory_id) == ("reinforced", one.memory_id)


def test_erasing_a_users_threads_erases_their_working_memory(
    app: Tether, cast: dict[str, Principal]
) -> None:
    thread = app.threads.create(cast["olga"], "u-1", title="refund").thread_id
    other = app.threads.create(cast["olga"], "u-2", title="other").thread_id
    app.working.set(auditor(TENANT), thread, "draft", "refund to IBAN ...")
    app.working.set(auditor(TENANT), other, "draft", "kept")

    counts = app.threads.erase_user(cast["alice"], "u-1")

    assert counts["working_memory"] == 1
    assert app.working.items(auditor(TENANT), thread) == {}
    assert app.working.items(auditor(TENANT), other) == {"draft": "kept"}


def test_the_recall_log_keeps_no_subject_id_in_the_clear(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    email = "jane.doe@example.com"
    propose(app, cast["olga"], "prefers phone calls", Scope.USER, email)
    app.memory.recall(cast["olga"], "phone", [(Scope.USER, email), (Scope.CASE, "C-77")])
    app.memory.flush_access()
    with backend.raw() as raw:
        rows = raw.execute("SELECT scopes FROM memory_recalls")
    assert rows
    stored = " ".join(str(row[0]) for row in rows)
    assert email not in stored and "C-77" not in stored
    assert "user:" + app.audit.subject_hash(TENANT, email) in stored


def test_proposals_built_from_hostile_fields_are_refused_before_storage(
    app: Tether, backend: TestDatabase, cast: dict[str, Principal]
) -> None:
    proposal = MemoryProposal(
        text="fine",
        kind=MemoryKind.FACT,
        scope=Scope.USER,
        scope_id="u-1",
        source_type=SourceType.HUMAN,
        confidence=0.9,
        tags=["ok", "bad\udcff"],
    )
    refuses(backend, lambda: app.memory.propose(cast["olga"], proposal), field="tags")


@pytest.fixture
def pg_database(request: pytest.FixtureRequest) -> Iterator[TestDatabase]:
    with postgres_database(request) as database:
        yield database


@pytest.mark.postgres
@pytest.mark.parametrize("how", ["subjects", "threads"])
def test_postgres_erasure_leaves_no_thread_title_or_working_memory_in_the_pages(
    pg_database: TestDatabase, how: str
) -> None:
    """Erasure's VACUUM FULL rewrites ``threads`` and ``working_memory`` too: the erased
    title and working-memory value are gone from the raw heap pages."""
    title, value = "ERASED-TITLE-7f3a", "ERASED-WORKING-9c1d"
    with pg_database.open() as app, pg_database.raw() as raw:
        cast = create_tenant(app, TENANT)
        thread = app.threads.create(cast["olga"], "u-1", title=title).thread_id
        app.working.set(auditor(TENANT), thread, "draft", value)
        relations = [(t, t, "heap") for t in ("threads", "working_memory")]
        before = b"".join(b"".join(r.pages) for r in read_pages(raw, relations))
        assert title.encode() in before and value.encode() in before

        if how == "subjects":
            app.subjects.erase(cast["alice"], "u-1")
        else:
            app.threads.erase_user(cast["alice"], "u-1")
        after = b"".join(b"".join(r.pages) for r in read_pages(raw, relations))

    assert title.encode() not in after and value.encode() not in after
