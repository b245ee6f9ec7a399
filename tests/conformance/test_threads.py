"""Threads on every backend: turns stored once and in order, summaries beside them,
retention, export and erasure of a user's threads, and tenant isolation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from tests.memory_support import create_tenant, propose
from tests.support import TestDatabase, auditor
from tether import FakeClock, Tether
from tether.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from tether.memory.models import Scope
from tether.principals import Principal
from tether.threads.models import NewTurn, TurnKind, TurnRole
from tether.threads.tokens import ApproximateCounter

THREAD_TABLES = ("threads", "thread_turns", "thread_summaries")


@pytest.fixture
def world(backend: TestDatabase) -> Iterator[tuple[Tether, FakeClock, dict[str, Principal]]]:
    clock = FakeClock()
    with Tether.open(backend.settings(embedder="none"), clock=clock) as app:
        app.threads.counter = ApproximateCounter()
        people = create_tenant(app, "acme")
        yield app, clock, people


def say(text: str, role: TurnRole = TurnRole.USER, **fields: object) -> NewTurn:
    return NewTurn(role=role, content=text, **fields)  # type: ignore[arg-type]


def test_turns_are_stored_once_in_order_and_read_by_range_end_id_and_ref(
    world: tuple[Tether, FakeClock, dict[str, Principal]],
) -> None:
    app, _, people = world
    agent = people["agent"]
    thread = app.threads.create(agent, "u-1", title="bike")
    first = app.threads.append(agent, thread.thread_id, say("My chain slips."))
    batch = app.threads.append_many(
        agent,
        thread.thread_id,
        [
            say("lookup(chain)", TurnRole.ASSISTANT, kind=TurnKind.TOOL_CALL, ref="call-1"),
            say("Chains stretch.", TurnRole.TOOL, kind=TurnKind.OBSERVATION, ref="call-1"),
            say("Replace the chain.", TurnRole.ASSISTANT, metadata={"model": "m"}),
        ],
    )

    assert first.seq == 1 and [t.seq for t in batch] == [2, 3, 4]
    assert app.threads.get(agent, thread.thread_id).last_turn_seq == 4
    assert [
        t.content for t in app.threads.turns(agent, thread.thread_id, from_seq=2, to_seq=3)
    ] == [
        "lookup(chain)",
        "Chains stretch.",
    ]
    assert [t.seq for t in app.threads.last_turns(agent, thread.thread_id, 2)] == [3, 4]
    assert app.threads.get_turn(agent, batch[1].turn_id).content == "Chains stretch."
    by_ref = app.threads.find_turns(agent, thread.thread_id, "call-1")
    assert [(t.kind, t.seq) for t in by_ref] == [(TurnKind.TOOL_CALL, 2), (TurnKind.OBSERVATION, 3)]
    assert batch[2].metadata == {"model": "m"} and batch[2].tokens > 0
    assert [t.thread_id for t in app.threads.all(agent, user_id="u-1")] == [thread.thread_id]


def test_bad_input_is_refused_and_changes_nothing(
    world: tuple[Tether, FakeClock, dict[str, Principal]],
) -> None:
    app, _, people = world
    agent = people["agent"]
    thread = app.threads.create(agent, "u-1")
    app.threads.append(agent, thread.thread_id, say("hello"))
    audit_before = len(app.audit.entries(auditor("acme"), limit=1000))

    with pytest.raises(InvalidInput):
        app.threads.append_many(agent, thread.thread_id, [])
    with pytest.raises(InvalidInput):
        app.threads.create(agent, " u-1")
    with pytest.raises(InvalidInput):
        app.threads.turns(agent, thread.thread_id, from_seq=0)
    with pytest.raises(NotFound):
        app.threads.append(agent, "no-such-thread", say("lost"))
    with pytest.raises(PermissionDenied):
        app.threads.append(people["u-1"], thread.thread_id, say("not allowed"))
    with pytest.raises(ValueError):
        NewTurn(role="robot", content="x")  # type: ignore[arg-type]

    assert app.threads.get(agent, thread.thread_id).last_turn_seq == 1
    assert len(app.audit.entries(auditor("acme"), limit=1000)) == audit_before


def test_summaries_never_delete_the_raw_turns(
    world: tuple[Tether, FakeClock, dict[str, Principal]],
) -> None:
    app, _, people = world
    agent = people["agent"]
    thread = app.threads.create(agent, "u-1")
    app.threads.append_many(
        agent, thread.thread_id, [say(f"Turn {n} about the claim.") for n in range(1, 31)]
    )

    first = app.threads.summarize(agent, thread.thread_id, through_seq=10)
    second = app.threads.summarize(agent, thread.thread_id, through_seq=25)
    again = app.threads.summarize(agent, thread.thread_id, through_seq=20)

    assert first is not None and (first.from_seq, first.to_seq) == (1, 10)
    assert second is not None and (second.from_seq, second.to_seq) == (1, 25)
    assert again is None
    assert [s.summary_id for s in app.threads.summaries(agent, thread.thread_id)] == [
        first.summary_id,
        second.summary_id,
    ]
    turns = app.threads.turns(agent, thread.thread_id)
    assert [t.seq for t in turns] == list(range(1, 31))
    assert turns[0].content == "Turn 1 about the claim."


def test_retention_purges_inactive_threads_and_keeps_held_ones(
    world: tuple[Tether, FakeClock, dict[str, Principal]],
) -> None:
    app, clock, people = world
    agent, olga = people["agent"], people["olga"]
    stale = app.threads.create(agent, "u-1", retention_days=30)
    active = app.threads.create(agent, "u-2", retention_days=30)
    kept = app.threads.create(agent, "u-3")
    held = app.threads.create(agent, "u-4", retention_days=30)
    for thread in (stale, active, kept, held):
        app.threads.append(agent, thread.thread_id, say("hello"))
    app.memory.place_hold(people["alice"], Scope.CONVERSATION, held.thread_id, "litigation")

    clock.advance(timedelta(days=20))
    app.threads.append(agent, active.thread_id, say("still here"))
    assert app.threads.retention_cycle(olga) == {}
    clock.advance(timedelta(days=11))
    counts = app.threads.retention_cycle(olga)

    assert counts == {"threads": 1, "thread_turns": 1, "thread_summaries": 0, "held": 1}
    with pytest.raises(NotFound):
        app.threads.get(agent, stale.thread_id)
    for thread in (active, kept, held):
        assert app.threads.get(agent, thread.thread_id).thread_id == thread.thread_id
    assert app.audit.entries(auditor("acme"), limit=1000)[-1].action == "thread.retention"


def test_export_and_erasure_of_a_user_reach_their_threads(
    backend: TestDatabase, world: tuple[Tether, FakeClock, dict[str, Principal]]
) -> None:
    app, _, people = world
    agent, alice = people["agent"], people["alice"]
    planted = "quetzalmarker"
    mine = app.threads.create(agent, "u-1")
    app.threads.append_many(
        agent,
        mine.thread_id,
        [say(f"{planted} lives at 5 Elm Street"), say(f"noted {planted}", TurnRole.ASSISTANT)],
    )
    app.threads.summarize(agent, mine.thread_id, through_seq=2)
    other = app.threads.create(agent, "u-2")
    app.threads.append(agent, other.thread_id, say("keepsake of u-2"))
    propose(app, people["olga"], f"{planted} prefers email", Scope.USER, "u-1")
    app.working.set(auditor("acme"), mine.thread_id, "draft", {"note": f"{planted} draft"})
    app.working.set(auditor("acme"), other.thread_id, "draft", "u-2's draft")

    exported = app.subjects.export(alice, "u-1")
    assert [t["thread"]["thread_id"] for t in exported["threads"]] == [mine.thread_id]
    assert exported["threads"][0]["turns"][0]["content"].startswith(planted)
    assert len(exported["threads"][0]["summaries"]) == 1
    assert exported["working_memory"][mine.thread_id][0]["value"] == {"note": f"{planted} draft"}
    assert list(exported["working_memory"]) == [mine.thread_id]

    counts = app.subjects.erase(alice, "u-1")

    assert counts == {
        "memories": 1,
        "threads": 1,
        "thread_turns": 2,
        "thread_summaries": 1,
        "working_memory": 1,
    }
    assert app.subjects.export(alice, "u-1")["threads"] == []
    assert app.working.get(auditor("acme"), mine.thread_id, "draft") is None
    assert app.working.get(auditor("acme"), other.thread_id, "draft") == "u-2's draft"
    with pytest.raises(NotFound):
        app.threads.get(agent, mine.thread_id)
    assert app.threads.turns(agent, other.thread_id)[0].content == "keepsake of u-2"
    with backend.raw() as raw:
        for table in THREAD_TABLES:
            rows = raw.execute(f"SELECT * FROM {table}")
            assert planted not in repr(rows), f"{table} still holds the erased text"
        (tombstone,) = raw.execute("SELECT counts FROM memory_tombstones")
    assert "thread_turns" in tombstone[0] and planted not in tombstone[0]
    erased = [
        e for e in app.audit.entries(auditor("acme"), limit=1000) if e.action.endswith("erased")
    ]
    assert erased[-2].details["thread_turns"] == 2
    assert erased[-1].details == {"sessions": 1, "working_memory": 1}
    assert planted not in repr(app.audit.entries(auditor("acme"), limit=1000))


def test_erasure_is_refused_while_a_hold_covers_the_users_thread(
    world: tuple[Tether, FakeClock, dict[str, Principal]],
) -> None:
    app, _, people = world
    thread = app.threads.create(people["agent"], "u-1")
    app.threads.append(people["agent"], thread.thread_id, say("hello"))
    app.memory.place_hold(people["alice"], Scope.USER, "u-1", "litigation")

    with pytest.raises(Conflict):
        app.subjects.erase(people["alice"], "u-1")
    assert app.threads.get(people["agent"], thread.thread_id).last_turn_seq == 1


def test_another_tenant_cannot_read_or_write_a_thread(
    backend: TestDatabase, world: tuple[Tether, FakeClock, dict[str, Principal]]
) -> None:
    app, _, people = world
    globex = create_tenant(app, "globex")
    thread = app.threads.create(people["agent"], "u-1")
    turn = app.threads.append(
        people["agent"], thread.thread_id, say("secret of acme", ref="call-9")
    )
    intruder = globex["agent"]

    with pytest.raises(NotFound):
        app.threads.get(intruder, thread.thread_id)
    with pytest.raises(NotFound):
        app.threads.turns(intruder, thread.thread_id)
    with pytest.raises(NotFound):
        app.threads.get_turn(intruder, turn.turn_id)
    with pytest.raises(NotFound):
        app.threads.find_turns(intruder, thread.thread_id, "call-9")
    with pytest.raises(NotFound):
        app.threads.append(intruder, thread.thread_id, say("planted"))
    with pytest.raises(NotFound):
        app.context.build(intruder, thread.thread_id, budget=500)
    assert app.threads.all(intruder) == []
    assert app.subjects.export(globex["alice"], "u-1")["threads"] == []
    assert app.threads.last_turns(people["agent"], thread.thread_id, 5) == [turn]

    if backend.backend == "postgres":
        # Row-level security alone: a transaction for globex asking for acme's rows.
        with app.storage.transaction("globex", write=False) as txn:
            assert txn.get_thread("acme", thread.thread_id) is None
            assert txn.get_thread_turn("acme", turn.turn_id) is None
            assert txn.list_threads("acme") == []
            assert (
                txn.list_thread_turns("acme", thread.thread_id, from_seq=1, to_seq=9, limit=9) == []
            )
