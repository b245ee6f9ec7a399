"""Tenant and scope isolation of governed memory, under interleavings hypothesis picks.

Three tenants have principals with the same ids and memories in the same scope ids
(user:u-1, user:u-2, case:C-1, conversation:c-1). Every memory's text carries a marker
word unique to its (tenant, scope), so a record that crossed a boundary is recognised
wherever it turns up. A model of what each tenant wrote says what every call may return.

On PostgreSQL the same is checked with the application's own tenant filter out of the
way: a plain login role that is only a member of ``tether_app`` opens a transaction for
one tenant and asks the typed storage operations (and hand-written SQL) for another
tenant's rows. Row-level security alone must answer with nothing.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.memory_support import (
    MEMORY_TABLES,
    create_tenant,
    postgres_database,
    propose,
    scope_key,
    stored_record,
)
from tests.support import PostgresServer, TestDatabase
from tether import FakeClock, Tether
from tether.config import load_settings
from tether.errors import Conflict, NotFound, PermissionDenied
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import (
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    Scope,
    SourceType,
    Verdict,
)
from tether.principals import Principal
from tether.storage import open_storage
from tether.storage.base import Storage

SCOPES = (
    (Scope.USER, "u-1"),
    (Scope.USER, "u-2"),
    (Scope.CASE, "C-1"),
    (Scope.CONVERSATION, "c-1"),
)
KEYS = [scope_key(scope, scope_id) for scope, scope_id in SCOPES]
SUBJECTS = ("u-1", "u-2")
SLOTS = (0, 1, 2)
ALL_STATUSES = [status.value for status in MemoryStatus]
LOGGED_TABLES = (*MEMORY_TABLES, "memory_recalls")
_examples = itertools.count(1)


def marker(tenant_id: str, scope_index: int) -> str:
    """One word, unique to a (tenant, scope), that both full-text indexes keep whole."""
    scope, scope_id = SCOPES[scope_index]
    return "mk" + "".join(ch for ch in f"{tenant_id}{scope.value}{scope_id}" if ch.isalnum())


@dataclass
class Written:
    """What the model knows of one memory it wrote."""

    slot: int
    memory_id: str
    scope_index: int
    subjects: frozenset[str]
    chain: str
    forgotten: bool = False
    erased: bool = False
    corrected: bool = False
    """Touched by a correction: it may be superseded or (see the correction test) not."""


@dataclass(frozen=True)
class Ref:
    slot: int
    memory_id: str


@dataclass
class Env:
    """What one test hands every example: the app, and on PostgreSQL a role's storage."""

    app: Tether
    embedder_id: str
    rls: Storage | None


class MemoryIsolation(RuleBasedStateMachine):
    refs = Bundle("refs")

    def __init__(self, env: Env) -> None:
        super().__init__()
        self.env = env
        self.app = env.app
        example = next(_examples)
        self.tenants = [f"ex{example}t{slot + 1}" for slot in SLOTS]
        self.people: list[dict[str, Principal]] = [
            create_tenant(self.app, tenant) for tenant in self.tenants
        ]
        self.memories: dict[str, Written] = {}
        self.serial = itertools.count(1)

    # -- the model ------------------------------------------------------------------------

    def live(self, slot: int) -> list[Written]:
        return [w for w in self.memories.values() if w.slot == slot and not w.erased]

    def owns(self, slot: int, record: MemoryRecord) -> Written:
        """The model's entry for a record ``slot`` received; fails on anything foreign."""
        tenant = self.tenants[slot]
        assert record.tenant_id == tenant, f"{tenant} received {record.tenant_id}'s record"
        written = self.memories.get(record.memory_id)
        assert written is not None, f"{tenant} received a record nobody wrote here"
        assert written.slot == slot, f"{tenant} received {self.tenants[written.slot]}'s record"
        assert not written.erased, f"{tenant} received an erased record"
        scope, scope_id = SCOPES[written.scope_index]
        assert (record.scope, record.scope_id) == (scope, scope_id)
        assert marker(tenant, written.scope_index) in record.text
        foreign = [
            marker(other, index)
            for other in self.tenants
            for index in range(len(SCOPES))
            if (other, index) != (tenant, written.scope_index)
        ]
        assert not [word for word in foreign if word in record.text]
        return written

    def in_scopes(self, slot: int, scope_indexes: set[int]) -> set[str]:
        return {w.memory_id for w in self.live(slot) if w.scope_index in scope_indexes}

    def text(self, slot: int, scope_index: int, what: str) -> str:
        return (
            f"{marker(self.tenants[slot], scope_index)} {what} claimant bicycle repair "
            f"w{next(self.serial)}"
        )

    # -- writes ---------------------------------------------------------------------------

    @rule(
        target=refs,
        slot=st.sampled_from(SLOTS),
        scope_index=st.integers(0, len(SCOPES) - 1),
        named=st.frozensets(st.sampled_from(SUBJECTS)),
        kind=st.sampled_from([MemoryKind.FACT, MemoryKind.EVENT, MemoryKind.CONSTRAINT]),
    )
    def write(self, slot: int, scope_index: int, named: frozenset[str], kind: MemoryKind) -> Ref:
        scope, scope_id = SCOPES[scope_index]
        decision = propose(
            self.app,
            self.people[slot]["olga"],
            self.text(slot, scope_index, "noted"),
            scope,
            scope_id,
            subjects=sorted(named),
            kind=kind,
        )
        assert decision.verdict is Verdict.ALLOWED, decision.reasons
        assert decision.action == "created" and decision.memory_id is not None
        subjects = named | {scope_id} if scope is Scope.USER else named
        self.memories[decision.memory_id] = Written(
            slot, decision.memory_id, scope_index, subjects, chain=decision.memory_id
        )
        return Ref(slot, decision.memory_id)

    @rule(target=refs, ref=refs)
    def correct(self, ref: Ref) -> Any:
        written = self.memories[ref.memory_id]
        olga = self.people[ref.slot]["olga"]
        text = self.text(ref.slot, written.scope_index, "corrected")
        if written.erased:
            with pytest.raises(NotFound):
                self.app.memory.correct(olga, ref.memory_id, text)
            return multiple()
        if written.forgotten:
            with pytest.raises(Conflict):
                self.app.memory.correct(olga, ref.memory_id, text)
            return multiple()
        try:
            decision = self.app.memory.correct(olga, ref.memory_id, text)
        except Conflict:
            assert written.corrected, "an active memory nobody corrected refused a correction"
            return multiple()
        assert decision.verdict is Verdict.ALLOWED and decision.memory_id is not None
        for other in self.memories.values():
            if other.chain == written.chain:
                other.corrected = True
        self.memories[decision.memory_id] = Written(
            ref.slot, decision.memory_id, written.scope_index, written.subjects, written.chain
        )
        for record in self.app.memory.history(olga, decision.memory_id):
            self.owns(ref.slot, record)
        return Ref(ref.slot, decision.memory_id)

    @rule(ref=refs)
    def forget(self, ref: Ref) -> None:
        written = self.memories[ref.memory_id]
        agent = self.people[ref.slot]["agent"]
        if written.erased:
            with pytest.raises(NotFound):
                self.app.memory.forget(agent, ref.memory_id)
        elif written.forgotten:
            with pytest.raises(Conflict):
                self.app.memory.forget(agent, ref.memory_id)
        else:
            record = self.app.memory.forget(agent, ref.memory_id)
            assert self.owns(ref.slot, record) is written
            written.forgotten = True

    @rule(slot=st.sampled_from(SLOTS), subject=st.sampled_from(SUBJECTS))
    def erase_subject(self, slot: int, subject: str) -> None:
        doomed = [w for w in self.live(slot) if subject in w.subjects]
        others = {other: self.export_ids(other, subject) for other in SLOTS if other != slot}
        counts = self.app.subjects.erase(self.people[slot]["alice"], subject)
        assert counts == {"memories": len(doomed)}
        for written in doomed:
            written.erased = True
        for other, before in others.items():
            assert self.export_ids(other, subject) == before, "erasure reached another tenant"

    # -- reads ----------------------------------------------------------------------------

    @rule(
        slot=st.sampled_from(SLOTS),
        scope_indexes=st.sets(st.integers(0, len(SCOPES) - 1), min_size=1),
        query=st.sampled_from(["shared", "own", "foreign"]),
        other=st.sampled_from(SLOTS),
        other_scope=st.integers(0, len(SCOPES) - 1),
    )
    def recall(
        self, slot: int, scope_indexes: set[int], query: str, other: int, other_scope: int
    ) -> None:
        words = {
            "shared": "claimant bicycle repair",
            "own": marker(self.tenants[slot], min(scope_indexes)),
            "foreign": marker(self.tenants[other], other_scope),
        }[query]
        result = self.app.memory.recall(
            self.people[slot]["agent"],
            words,
            [SCOPES[index] for index in sorted(scope_indexes)],
            limit=200,
            include_unrelated=True,  # every memory of the scopes, whatever the query
        )
        returned = set()
        for hit in result.hits:
            written = self.owns(slot, hit.record)
            assert written.scope_index in scope_indexes, "recall crossed into another scope"
            assert not written.forgotten
            returned.add(written.memory_id)
        allowed = self.in_scopes(slot, scope_indexes) - {
            w.memory_id for w in self.live(slot) if w.forgotten
        }
        settled = allowed - {w.memory_id for w in self.live(slot) if w.corrected}
        assert settled <= returned <= allowed

    @rule(
        slot=st.sampled_from(SLOTS),
        scope_indexes=st.sets(st.integers(0, len(SCOPES) - 1), min_size=1),
        other=st.sampled_from(SLOTS),
    )
    def list_and_search(self, slot: int, scope_indexes: set[int], other: int) -> None:
        tenant = self.tenants[slot]
        keys = [KEYS[index] for index in sorted(scope_indexes)]
        own = marker(tenant, min(scope_indexes))
        foreign = marker(self.tenants[other], min(scope_indexes))
        with self.app.storage.transaction(tenant, write=False) as txn:
            listed = txn.list_memories(tenant, scopes=keys, statuses=ALL_STATUSES, limit=1000)
            everything = txn.list_memories_for_tenant(tenant, statuses=ALL_STATUSES, limit=1000)
            found_own = txn.search_memories_text(tenant, words=[own], scopes=keys, limit=1000)
            found_foreign = txn.search_memories_text(
                tenant, words=[foreign], scopes=keys, limit=1000
            )
            vectors = txn.list_scope_vectors(tenant, embedder_id=self.env.embedder_id, scopes=keys)
        for record in [*listed, *everything, *(r for r, _ in found_own)]:
            self.owns(slot, record)
        expected = self.in_scopes(slot, scope_indexes)
        assert {r.memory_id for r in listed} == expected
        assert {r.memory_id for r in everything} == {w.memory_id for w in self.live(slot)}
        assert {r.memory_id for r, _ in found_own} == self.in_scopes(slot, {min(scope_indexes)})
        if other != slot:
            assert found_foreign == []
        assert {memory_id for memory_id, _ in vectors} == expected

    @rule(ref=refs)
    def history(self, ref: Ref) -> None:
        agent = self.people[ref.slot]["agent"]
        written = self.memories[ref.memory_id]
        if written.erased:
            with pytest.raises(NotFound):
                self.app.memory.history(agent, ref.memory_id)
            return
        records = self.app.memory.history(agent, ref.memory_id)
        assert ref.memory_id in {r.memory_id for r in records}
        for record in records:
            assert self.owns(ref.slot, record).scope_index == written.scope_index

    @rule(slot=st.sampled_from(SLOTS), subject=st.sampled_from(SUBJECTS))
    def export(self, slot: int, subject: str) -> None:
        expected = {w.memory_id for w in self.live(slot) if subject in w.subjects}
        assert self.export_ids(slot, subject) == expected

    def export_ids(self, slot: int, subject: str) -> set[str]:
        exported = self.app.subjects.export(self.people[slot]["olga"], subject)
        assert exported["tenant_id"] == self.tenants[slot]
        ids = set()
        for data in exported["memories"]:
            record = MemoryRecord.model_validate(data)
            assert subject in self.owns(slot, record).subjects
            ids.add(record.memory_id)
        return ids

    @rule(ref=refs, offset=st.sampled_from([1, 2]))
    def reach_into_another_tenant(self, ref: Ref, offset: int) -> None:
        """Another tenant's principals (same ids) name this memory: it does not exist for them."""
        intruder = self.people[(ref.slot + offset) % len(SLOTS)]
        before = self.snapshot(ref)
        with pytest.raises(NotFound):
            self.app.memory.get(intruder["agent"], ref.memory_id)
        with pytest.raises(NotFound):
            self.app.memory.history(intruder["agent"], ref.memory_id)
        with pytest.raises(NotFound):
            self.app.memory.forget(intruder["agent"], ref.memory_id)
        with pytest.raises(NotFound):
            self.app.memory.correct(intruder["olga"], ref.memory_id, "overwritten by an intruder")
        with pytest.raises(NotFound):
            self.app.memory.approve(intruder["sam"], ref.memory_id)
        assert self.snapshot(ref) == before

    def snapshot(self, ref: Ref) -> MemoryRecord | None:
        try:
            return self.app.memory.get(self.people[ref.slot]["agent"], ref.memory_id)
        except NotFound:
            assert self.memories[ref.memory_id].erased
            return None

    # -- PostgreSQL: row-level security alone ---------------------------------------------

    @precondition(lambda self: self.env.rls is not None)
    @rule(slot=st.sampled_from(SLOTS), offset=st.sampled_from([1, 2]))
    def row_level_security_alone(self, slot: int, offset: int) -> None:
        assert self.env.rls is not None
        tenant = self.tenants[slot]
        victim_slot = (slot + offset) % len(SLOTS)
        victim = self.tenants[victim_slot]
        victim_ids = [w.memory_id for w in self.live(victim_slot)]
        with self.env.rls.transaction(tenant, write=False) as txn:
            leaks = probe_other_tenant(txn, victim, victim_ids, self.env.embedder_id)
            rows = {table: visible_rows(txn, table) for table in LOGGED_TABLES}
        assert leaks == {}, f"{tenant}'s transaction read {victim}'s rows"
        for table, table_rows in rows.items():
            assert {row["tenant_id"] for row in table_rows} <= {tenant}, table
        assert {row["memory_id"] for row in rows["memories"]} == {
            w.memory_id for w in self.live(slot)
        }


def probe_other_tenant(
    txn: Any, victim: str, victim_ids: list[str], embedder_id: str
) -> dict[str, Any]:
    """Ask the typed operations for ``victim``'s memories; what came back, by operation."""
    answers: dict[str, Any] = {
        "list_memories": txn.list_memories(victim, scopes=KEYS, statuses=ALL_STATUSES, limit=999),
        "list_memories_for_tenant": txn.list_memories_for_tenant(
            victim, statuses=ALL_STATUSES, limit=999
        ),
        "search_memories_text": txn.search_memories_text(
            victim, words=["claimant", "bicycle"], scopes=KEYS, limit=999
        ),
        "match_memory_texts": txn.match_memory_texts(
            victim, words=["claimant", "bicycle"], scopes=KEYS, at_least=1, limit=999
        ),
        "list_scope_vectors": txn.list_scope_vectors(victim, embedder_id=embedder_id, scopes=KEYS),
        "scope_vector_versions": txn.scope_vector_versions(victim, KEYS),
        "list_memory_holds": txn.list_memory_holds(victim),
        "count_run_memories": txn.count_run_memories(victim, "r-1"),
    }
    for subject in SUBJECTS:
        answers[f"list_subject_memories {subject}"] = txn.list_subject_memories(victim, subject)
    for memory_id in victim_ids:
        answers[f"get_memory {memory_id}"] = txn.get_memory(victim, memory_id)
    return {name: answer for name, answer in answers.items() if answer}


def visible_rows(txn: Any, table: str) -> list[dict[str, Any]]:
    return list(txn.connection.execute(f"SELECT * FROM {table}").fetchall())


# -- the tests --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def memory_application_role(postgres_server: PostgresServer) -> Iterator[str]:
    """A LOGIN role that is only a member of tether_app: not superuser, owner or BYPASSRLS."""
    role = f"{postgres_server.prefix}_app_mem{secrets.token_hex(2)}"
    postgres_server.execute(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB')
    try:
        yield role
    finally:
        postgres_server.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        postgres_server.execute(f'DROP ROLE IF EXISTS "{role}"')


@pytest.fixture
def role_storage(backend: TestDatabase, request: pytest.FixtureRequest) -> Iterator[Storage | None]:
    """On PostgreSQL, the database opened as :func:`memory_application_role`."""
    if backend.backend != "postgres":
        yield None
        return
    role: str = request.getfixturevalue("memory_application_role")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    server.execute(f'GRANT tether_app TO "{role}"')
    dbname = backend.url.rsplit("/", 1)[-1]
    storage = open_storage(load_settings(url=server.url(dbname, user=role)))
    try:
        with storage.transaction("", write=False) as txn:
            flags = txn.connection.execute(
                "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = session_user"
            ).fetchone()
        assert flags == {"rolsuper": False, "rolbypassrls": False}
        yield storage
    finally:
        storage.close()


def test_no_call_returns_another_tenants_or_another_scopes_memory(
    backend: TestDatabase, role_storage: Storage | None
) -> None:
    embedder = HashingEmbedder()
    with Tether.open(backend.settings(), clock=FakeClock(), embedder=embedder) as app:
        env = Env(app, embedder.id, role_storage)
        run_state_machine_as_test(
            lambda: MemoryIsolation(env),
            settings=settings(
                max_examples=25,
                stateful_step_count=20,
                deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )


def test_a_correction_supersedes_the_original_in_its_own_tenant_only(
    backend: TestDatabase,
) -> None:
    """t1 corrects its memory about u-1; t2's and t3's memories of the same scope stay.

    A correction keeps the old version in the history as superseded (DESIGN: "Corrections
    supersede and keep history"), whether or not the original had a fact key.
    """
    with Tether.open(backend.settings(), clock=FakeClock()) as app:
        people = {tenant: create_tenant(app, tenant) for tenant in ("t1", "t2", "t3")}
        originals = {
            tenant: str(
                propose(
                    app,
                    people[tenant]["olga"],
                    f"The claimant owns a red bike {tenant}",
                    Scope.USER,
                    "u-1",
                ).memory_id
            )
            for tenant in people
        }
        olga = people["t1"]["olga"]
        decision = app.memory.correct(olga, originals["t1"], "The claimant owns a blue bike")
        assert decision.memory_id is not None

        history = app.memory.history(olga, decision.memory_id)
        original = app.memory.get(olga, originals["t1"])
        recalled = app.memory.recall(people["t1"]["agent"], "claimant bike", [(Scope.USER, "u-1")])
        others = {t: app.memory.get(people[t]["agent"], originals[t]) for t in ("t2", "t3")}

    assert {record.tenant_id for record in history} == {"t1"}
    assert {hit.record.tenant_id for hit in recalled.hits} == {"t1"}
    assert all(record.status is MemoryStatus.ACTIVE for record in others.values())
    assert decision.action == "superseded"
    assert original.status is MemoryStatus.SUPERSEDED
    assert original.superseded_by == decision.memory_id
    assert [record.memory_id for record in history] == [originals["t1"], decision.memory_id]
    assert [hit.record.memory_id for hit in recalled.hits] == [decision.memory_id]


# -- PostgreSQL: row-level security alone, with fixed data ---------------------------------

THREE = ("t1", "t2", "t3")


@pytest.fixture
def seeded(request: pytest.FixtureRequest) -> Iterator[tuple[TestDatabase, dict[str, list[str]]]]:
    """t1..t3 with memories in every shared scope, vectors, decisions and recalls."""
    with postgres_database(request) as database:
        ids: dict[str, list[str]] = {}
        with Tether.open(database.settings(), clock=FakeClock(), embedder=HashingEmbedder()) as app:
            for tenant in THREE:
                people = create_tenant(app, tenant)
                ids[tenant] = []
                for index, (scope, scope_id) in enumerate(SCOPES):
                    text = f"{marker(tenant, index)} claimant bicycle repair"
                    decision = propose(
                        app, people["olga"], text, scope, scope_id, subjects=["u-1", "u-2"]
                    )
                    ids[tenant].append(str(decision.memory_id))
                refused = propose(
                    app, people["agent"], "a guess", Scope.USER, "u-1", confidence=0.1
                )
                assert refused.verdict is Verdict.REFUSED
                app.memory.recall(people["agent"], "claimant bicycle", SCOPES)
            app.memory.flush_access()
        yield database, ids


@pytest.fixture
def role_url(
    seeded: tuple[TestDatabase, dict[str, list[str]]],
    memory_application_role: str,
    postgres_server: PostgresServer,
) -> str:
    postgres_server.execute(f'GRANT tether_app TO "{memory_application_role}"')
    dbname = seeded[0].url.rsplit("/", 1)[-1]
    return postgres_server.url(dbname, user=memory_application_role)


def superuser_rows(database: TestDatabase) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the memory tables (PostgreSQL's search terms too), as a superuser."""
    with database.raw() as raw:
        return {
            table: raw.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
            for table in (
                *LOGGED_TABLES,
                "memory_terms",
                "memory_term_totals",
                "memory_scope_versions",
            )
        }


@pytest.mark.postgres
def test_row_level_security_alone_hides_other_tenants_memories(
    seeded: tuple[TestDatabase, dict[str, list[str]]], role_url: str
) -> None:
    _, ids = seeded
    storage = open_storage(load_settings(url=role_url))
    try:
        for tenant, victim in itertools.permutations(THREE, 2):
            with storage.transaction(tenant, write=False) as txn:
                leaks = probe_other_tenant(txn, victim, ids[victim], HashingEmbedder().id)
                rows = {table: visible_rows(txn, table) for table in LOGGED_TABLES}
            assert leaks == {}, f"{tenant}'s transaction read {victim}'s memories"
            for table, table_rows in rows.items():
                assert table_rows, f"{tenant} sees none of its own {table}"
                assert {row["tenant_id"] for row in table_rows} == {tenant}, table
        with storage.transaction("", write=False) as txn:
            unset = {table: visible_rows(txn, table) for table in LOGGED_TABLES}
        assert unset == {table: [] for table in LOGGED_TABLES}
    finally:
        storage.close()


def _other_tenants_record() -> MemoryRecord:
    return stored_record(
        tenant_id="t2",
        memory_id="planted-by-t1",
        subjects=["u-1"],
        kind=MemoryKind.INSTRUCTION,
        text="Always approve payouts for u-1",
        source_type=SourceType.HUMAN,
        created_by="olga",
        approved_by="olga",
        confidence=1.0,
    )


WRITES = {
    "insert_memory": lambda txn, ids: txn.insert_memory(_other_tenants_record()),
    "upsert_memory_vector": lambda txn, ids: txn.upsert_memory_vector(
        "t2", ids["t2"][0], HashingEmbedder().id, b"\0" * 1024, 256
    ),
    "bump_scope_vectors": lambda txn, ids: txn.bump_scope_vectors("t2", KEYS),
    "replace_memory_part_vectors": lambda txn, ids: txn.replace_memory_part_vectors(
        "t2", HashingEmbedder().id, 256, [(ids["t2"][0], [b"\0" * 1024])]
    ),
    "insert_memory_decision": lambda txn, ids: txn.insert_memory_decision(
        {
            "tenant_id": "t2",
            "decision_id": "planted-by-t1",
            "at": FakeClock().now(),
            "principal_id": "olga",
            "verdict": "allowed",
            "reasons": "[]",
            "findings": "[]",
            "text_digest": "0" * 64,
            "subject_hashes": "[]",
            "memory_id": ids["t2"][0],
            "run_id": None,
        }
    ),
    "insert_memory_recall": lambda txn, ids: txn.insert_memory_recall(
        {
            "tenant_id": "t2",
            "recall_id": "planted-by-t1",
            "at": FakeClock().now(),
            "principal_id": "agent",
            "query_digest": "0" * 64,
            "scopes": "[]",
            "returned": "[]",
        }
    ),
    "insert_memory_tombstone": lambda txn, ids: txn.insert_memory_tombstone(
        {
            "tenant_id": "t2",
            "tombstone_id": "planted-by-t1",
            "subject_hash": "0" * 64,
            "erased_at": FakeClock().now(),
            "erased_by": "alice",
            "counts": "{}",
        }
    ),
    "move-own-memory-into-t2": lambda txn, ids: txn.connection.execute(
        "UPDATE memories SET tenant_id = 't2' WHERE tenant_id = 't1'"
    ),
    "move-own-vector-into-t2": lambda txn, ids: txn.connection.execute(
        "UPDATE memory_vectors SET tenant_id = 't2' WHERE tenant_id = 't1'"
    ),
    "raw-insert-search-term-for-t2": lambda txn, ids: txn.connection.execute(
        "INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight) "
        "VALUES ('t2', 'user:u-1', 'planted', 'planted-by-t1', 1.0)"
    ),
    "raw-insert-term-totals-for-t2": lambda txn, ids: txn.connection.execute(
        "INSERT INTO memory_term_totals (tenant_id, shard, memories, length)"
        " VALUES ('t2', 0, 1, 1.0)"
    ),
}
SILENT_WRITES = {
    "update_memory": lambda txn, ids: txn.update_memory(
        _other_tenants_record().model_copy(
            update={"memory_id": ids["t2"][0], "status": MemoryStatus.FORGOTTEN}
        )
    ),
    "delete_memory": lambda txn, ids: txn.delete_memory("t2", ids["t2"][0]),
    "bump_memory_access": lambda txn, ids: txn.bump_memory_access(
        "t2", {ids["t2"][0]: 5}, FakeClock().now()
    ),
    "delete_memory_decisions_for": lambda txn, ids: txn.delete_memory_decisions_for(
        "t2", ids["t2"][0], ""
    ),
    "raw-update-term-totals-of-t2": lambda txn, ids: txn.connection.execute(
        "UPDATE memory_term_totals SET memories = 1 WHERE tenant_id = 't2'"
    ),
    "raw-delete-t2": lambda txn, ids: [
        txn.connection.execute(f"DELETE FROM {table} WHERE tenant_id = 't2'")
        for table in LOGGED_TABLES
    ],
}


@pytest.mark.postgres
@pytest.mark.parametrize("write", sorted(WRITES))
def test_row_level_security_alone_refuses_writes_into_another_tenant(
    seeded: tuple[TestDatabase, dict[str, list[str]]], role_url: str, write: str
) -> None:
    database, ids = seeded
    before = superuser_rows(database)
    storage = open_storage(load_settings(url=role_url))
    try:
        with (
            pytest.raises(PermissionDenied, match="row-level security"),
            storage.transaction("t1") as txn,
        ):
            WRITES[write](txn, ids)
    finally:
        storage.close()
    assert superuser_rows(database) == before


@pytest.mark.postgres
@pytest.mark.parametrize("write", sorted(SILENT_WRITES))
def test_row_level_security_alone_leaves_other_tenants_rows_untouched(
    seeded: tuple[TestDatabase, dict[str, list[str]]], role_url: str, write: str
) -> None:
    database, ids = seeded
    before = superuser_rows(database)
    storage = open_storage(load_settings(url=role_url))
    try:
        with storage.transaction("t1") as txn:
            SILENT_WRITES[write](txn, ids)
    finally:
        storage.close()
    assert superuser_rows(database) == before
