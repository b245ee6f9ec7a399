"""Who reads which memories, on every backend: the role → scopes and clearance table of
the tenant's memory policy decides what recall returns (the rest counted and explained,
never returned), what ``get``, ``history`` and ``pending`` show, and what the context
builder puts in a prompt; one tenant's table never changes another's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.memory_support import create_tenant, opened, propose
from tests.support import TestDatabase
from tether import Tether
from tether.context.models import ContextOptions
from tether.errors import PermissionDenied
from tether.memory.access import ABOVE_CLEARANCE, SCOPE_NOT_ALLOWED, ReadAccess
from tether.memory.models import MemoryKind, Scope, Sensitivity, SourceType
from tether.memory.policy import PolicyConfig
from tether.principals import GLOBAL_TENANT, Principal, Role
from tether.threads.models import NewTurn

USER = (Scope.USER, "u-1")
CASE = (Scope.CASE, "C-7")
CASE_TEXT = "The claim C-7 bicycle was stolen from the garage on Monday"
RESTRICTED_TEXT = "The claimant's bicycle insurance fraud inquiry is open"


class World:
    def __init__(self, app: Tether) -> None:
        self.app = app
        self.people = {tenant: create_tenant(app, tenant) for tenant in ("acme", "globex")}

    def who(self, name: str, tenant: str = "acme") -> Principal:
        return self.people[tenant][name]

    def write(
        self,
        text: str,
        where: tuple[Scope, str],
        *,
        tenant: str = "acme",
        sensitivity: Sensitivity = Sensitivity.INTERNAL,
        kind: MemoryKind = MemoryKind.FACT,
    ) -> str:
        decision = propose(
            self.app,
            self.who("alice", tenant),
            text,
            where[0],
            where[1],
            sensitivity=sensitivity,
            kind=kind,
        )
        assert decision.memory_id is not None, decision
        return decision.memory_id

    def texts(self, name: str, query: str, *scopes: tuple[Scope, str], tenant: str = "acme"):  # type: ignore[no-untyped-def]
        result = self.app.memory.recall(self.who(name, tenant), query, list(scopes or [USER]))
        return sorted(h.record.text for h in result.hits), result

    def let_viewers_read_cases(self, tenant: str) -> None:
        table = {Role.VIEWER: ReadAccess(scopes=list(Scope), clearance=Sensitivity.RESTRICTED)}
        self.app.memory.configure(self.who("alice", tenant), PolicyConfig(read_access=table))


@pytest.fixture(params=["hashing", "none"])
def world(backend: TestDatabase, request: pytest.FixtureRequest) -> Iterator[World]:
    with opened(backend, request.param) as app:
        yield World(app)


def test_a_viewer_recalls_no_case_memory_under_the_default_table(world: World) -> None:
    case_id = world.write(CASE_TEXT, CASE)
    world.write("Case C-7 is closed only with a police report", CASE, kind=MemoryKind.CONSTRAINT)
    world.write("The claimant's bicycle is a blue cargo bike", USER)

    agent_texts, _ = world.texts("agent", "bicycle stolen garage", USER, CASE)
    viewer_texts, result = world.texts("u-1", "bicycle stolen garage", USER, CASE)

    assert CASE_TEXT in agent_texts
    assert viewer_texts == ["The claimant's bicycle is a blue cargo bike"]
    assert result.filtered_out[SCOPE_NOT_ALLOWED] == 2  # the fact and the constraint
    assert (
        "role viewer reads the scopes run, conversation, user, tenant, global"
        in (result.filtered_why[SCOPE_NOT_ALLOWED])
    )
    only_case_texts, only_case = world.texts("u-1", "bicycle stolen garage", CASE)
    assert only_case_texts == [] and only_case.filtered_out == {SCOPE_NOT_ALLOWED: 2}
    with pytest.raises(PermissionDenied, match="in case scope: role viewer reads the scopes"):
        world.app.memory.get(world.who("u-1"), case_id)
    with pytest.raises(PermissionDenied, match="in case scope"):
        world.app.memory.history(world.who("u-1"), case_id)
    assert world.app.memory.get(world.who("agent"), case_id).text == CASE_TEXT


def test_a_tenant_that_lets_viewers_read_cases_lets_them(world: World) -> None:
    case_id = world.write(CASE_TEXT, CASE)

    world.let_viewers_read_cases("acme")

    texts, result = world.texts("u-1", "bicycle stolen garage", CASE)
    assert texts == [CASE_TEXT]
    assert SCOPE_NOT_ALLOWED not in result.filtered_out
    assert world.app.memory.get(world.who("u-1"), case_id).text == CASE_TEXT
    policy = world.app.memory.policy(world.who("alice"))
    assert policy.read_access[Role.VIEWER].scopes == list(Scope)


def test_a_memory_above_a_roles_clearance_is_filtered_counted_and_explained(
    world: World,
) -> None:
    restricted = world.write(RESTRICTED_TEXT, USER, sensitivity=Sensitivity.RESTRICTED)
    confidential = world.write(
        "The claimant's bicycle was bought with a loan", USER, sensitivity=Sensitivity.CONFIDENTIAL
    )

    admin_texts, _ = world.texts("alice", "claimant bicycle")
    agent_texts, agent = world.texts("agent", "claimant bicycle")
    viewer_texts, viewer = world.texts("u-1", "claimant bicycle")

    assert admin_texts == sorted([RESTRICTED_TEXT, "The claimant's bicycle was bought with a loan"])
    assert agent_texts == ["The claimant's bicycle was bought with a loan"]
    assert agent.filtered_out[ABOVE_CLEARANCE] == 1
    assert agent.filtered_why[ABOVE_CLEARANCE] == (
        "role agent reads memories up to confidential sensitivity (the tenant's read_access table)"
    )
    assert viewer_texts == [] and viewer.filtered_out[ABOVE_CLEARANCE] == 2
    with pytest.raises(PermissionDenied, match="of restricted sensitivity"):
        world.app.memory.get(world.who("agent"), restricted)
    with pytest.raises(PermissionDenied, match="of restricted sensitivity"):
        world.app.memory.forget(world.who("olga"), restricted)
    assert world.app.memory.get(world.who("agent"), confidential).memory_id == confidential


def test_listing_scopes_leaves_out_what_the_table_withholds(world: World) -> None:
    world.write(CASE_TEXT, CASE)
    world.write(RESTRICTED_TEXT, USER, sensitivity=Sensitivity.RESTRICTED)
    world.write("The claimant's bicycle is a blue cargo bike", USER)

    def listed(name: str) -> list[str]:
        return sorted(r.text for r in world.app.memory.in_scopes(world.who(name), [USER, CASE]))

    assert listed("alice") == sorted(
        [CASE_TEXT, RESTRICTED_TEXT, "The claimant's bicycle is a blue cargo bike"]
    )
    assert listed("agent") == sorted([CASE_TEXT, "The claimant's bicycle is a blue cargo bike"])
    assert listed("u-1") == ["The claimant's bicycle is a blue cargo bike"]
    world.let_viewers_read_cases("acme")
    assert listed("u-1") == listed("alice")


def test_a_held_memory_above_a_reviewers_clearance_is_neither_listed_nor_approved(
    world: World,
) -> None:
    decision = propose(
        world.app,
        world.who("agent"),
        "Acme pays bicycle claims only after the fraud team's sign-off",
        Scope.TENANT,
        "acme",
        sensitivity=Sensitivity.RESTRICTED,
    )
    assert decision.verdict.value == "held" and decision.memory_id is not None

    assert world.app.memory.pending(world.who("sam")) == []
    with pytest.raises(PermissionDenied, match="of restricted sensitivity"):
        world.app.memory.approve(world.who("sam"), decision.memory_id)
    assert [r.memory_id for r in world.app.memory.pending(world.who("alice"))] == [
        decision.memory_id
    ]
    approved = world.app.memory.approve(world.who("alice"), decision.memory_id)
    assert approved.status.value == "active"


def test_history_leaves_out_versions_above_the_readers_clearance(world: World) -> None:
    first = propose(
        world.app,
        world.who("alice"),
        "The claimant's bicycle is insured with Zephyr Mutual",
        Scope.USER,
        "u-1",
        fact_key="insurer",
        sensitivity=Sensitivity.RESTRICTED,
    )
    second = propose(
        world.app,
        world.who("alice"),
        "The claimant's bicycle is insured with Boreal Insurance",
        Scope.USER,
        "u-1",
        fact_key="insurer",
    )
    assert first.memory_id and second.memory_id

    agent_versions = world.app.memory.history(world.who("agent"), second.memory_id)
    admin_versions = world.app.memory.history(world.who("alice"), second.memory_id)

    assert [r.memory_id for r in agent_versions] == [second.memory_id]
    assert [r.memory_id for r in admin_versions] == [first.memory_id, second.memory_id]


def test_the_context_builder_does_not_leak_withheld_memories(world: World) -> None:
    world.write(CASE_TEXT, CASE)
    world.write(RESTRICTED_TEXT, USER, sensitivity=Sensitivity.RESTRICTED)
    world.write("Case C-7 is closed only with a police report", CASE, kind=MemoryKind.CONSTRAINT)
    agent = world.who("agent")
    thread = world.app.threads.create(agent, "u-1")
    world.app.threads.append(
        agent, thread.thread_id, NewTurn(role="user", content="Was my bicycle stolen?")
    )
    options = ContextOptions(scopes=[CASE])

    for_viewer = world.app.context.build(
        world.who("u-1"), thread.thread_id, budget=4000, query="bicycle stolen", options=options
    )
    for_agent = world.app.context.build(
        agent, thread.thread_id, budget=4000, query="bicycle stolen", options=options
    )

    for text in (CASE_TEXT, RESTRICTED_TEXT, "police report"):
        assert text not in for_viewer.text
    withheld = {d.reason.split(":")[0]: d.what for d in for_viewer.dropped}
    assert withheld[SCOPE_NOT_ALLOWED] == "2 memories"
    assert withheld[ABOVE_CLEARANCE] == "1 memory"
    assert CASE_TEXT in for_agent.text and "police report" in for_agent.text
    assert RESTRICTED_TEXT not in for_agent.text


def test_one_tenants_table_does_not_change_another_tenants(world: World) -> None:
    for tenant in ("acme", "globex"):
        world.write(CASE_TEXT, CASE, tenant=tenant)
        world.write(RESTRICTED_TEXT, USER, tenant=tenant, sensitivity=Sensitivity.RESTRICTED)

    world.let_viewers_read_cases("globex")

    globex_texts, _ = world.texts("u-1", "bicycle", USER, CASE, tenant="globex")
    acme_texts, acme = world.texts("u-1", "bicycle", USER, CASE, tenant="acme")
    assert globex_texts == sorted([CASE_TEXT, RESTRICTED_TEXT])
    assert acme_texts == []
    assert acme.filtered_out[SCOPE_NOT_ALLOWED] == 1
    assert acme.filtered_out[ABOVE_CLEARANCE] == 1
    assert world.app.memory.policy(world.who("alice", "acme")).read_access == {}


def test_a_principal_with_several_roles_reads_what_any_of_them_reads(world: World) -> None:
    world.write(CASE_TEXT, CASE)
    world.write(RESTRICTED_TEXT, USER, sensitivity=Sensitivity.RESTRICTED)
    world.app.tenants.grant(world.who("alice"), "u-1", ["viewer", "operator"])
    both = world.app.tenants.principal("acme", "u-1")

    result = world.app.memory.recall(both, "bicycle", [USER, CASE])

    texts = [h.record.text for h in result.hits]
    assert texts == [CASE_TEXT]
    assert result.filtered_out == {ABOVE_CLEARANCE: 1}


def test_global_memory_is_read_under_the_readers_tenant_table(world: World) -> None:
    for name in ("pat", "quinn"):
        world.app.tenants.add_platform_admin(name)
    held = propose(
        world.app,
        world.app.tenants.principal(GLOBAL_TENANT, "pat"),
        "Bicycle claims above 5000 need a second adjuster",
        Scope.GLOBAL,
        "all",
        source_type=SourceType.HUMAN,
        sensitivity=Sensitivity.CONFIDENTIAL,
    )
    assert held.memory_id is not None
    world.app.memory.approve(world.app.tenants.principal(GLOBAL_TENANT, "quinn"), held.memory_id)

    agent_texts, _ = world.texts("agent", "bicycle claims adjuster", (Scope.GLOBAL, "all"))
    viewer_texts, viewer = world.texts("u-1", "bicycle claims adjuster", (Scope.GLOBAL, "all"))

    assert agent_texts == ["Bicycle claims above 5000 need a second adjuster"]
    assert viewer_texts == [] and viewer.filtered_out == {ABOVE_CLEARANCE: 1}
