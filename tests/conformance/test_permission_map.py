"""The authorization test generated from the permission map (:mod:`tether.permissions`).

Every public operation of the services on ``Tether`` is called by every role, in its own
tenant and from another tenant, on each backend; the expected answer of each cell is
computed from the map, never written by hand:

- own tenant: allowed when the role holds the operation's permission (and, for answers to
  waits and changes to memory, when the map's rule for that wait or scope allows it);
  allowed means the call succeeds, denied means :class:`PermissionDenied` and the
  tenant's audit trail unchanged;
- other tenant (a principal of ``globex``, or a platform administrator, naming ``acme``'s
  objects): denied by role as above, else the object is not found or the result holds
  nothing of ``acme``.

A second test fails when a public method of a service, or a CLI command, is missing from
the map (or the map names one that does not exist). The CLI is exercised the same way
(every command x every role x own and other tenant), through the Typer app in process.
One database per backend is shared by every cell; each cell that changes something gets
fresh objects to act on.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import BaseModel
from typer.testing import CliRunner

from tests.support import PostgresServer
from tether import FakeClock, Tether, canonical
from tether.cli.main import app as cli_app
from tether.config import load_settings
from tether.errors import Conflict, MemoryWriteRefused, NotFound, PermissionDenied
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType
from tether.memory.policy import PolicyConfig
from tether.permissions import (
    NO_PRINCIPAL,
    OPERATIONS,
    allows,
    check_memory_change,
    check_wait_answer,
)
from tether.permissions_cli import CLI_COMMANDS, command_permission
from tether.principals import GLOBAL_TENANT, Principal, Role
from tether.runs import END, RunContext, Workflow, WorkflowRegistry
from tether.runs.graphs import GraphCheckpointWrite
from tether.runs.listing import RunQuery
from tether.storage.rows import GraphCheckpointRow
from tether.threads import NewTurn

SERVICES = ("runs", "runbook", "memory", "threads", "working", "procedures", "audit", "tenants")
SERVICES += ("subjects", "context")
HOOKS = "http://127.0.0.1:9/"
STORE_NS = ("user", "u-1", "prefs")
OWN, OTHER = "acme", "globex"
STARTER = "acme-starter"
PROCEDURES = [
    {
        "kind": "policy",
        "name": "no-deletes",
        "description": "Never delete production data.",
        "severity": "hard",
        "match": {"effects": ["delete_*"]},
        "action": "forbid",
    }
]


class Ask(BaseModel):
    reason: str = "clarification_required"
    answer: Any = None


def asking() -> Workflow[Ask]:
    wf: Workflow[Ask] = Workflow("asking", state=Ask)

    @wf.node(start=True)
    def ask(ctx: RunContext, s: Ask) -> str:
        if s.reason == "approval":
            s.answer = ctx.approval({"refund": 10}, rationale="a refund").status.value
        elif s.reason == "scheduled_resume":
            later = ctx.step("later", lambda: ctx.now() + timedelta(hours=1))
            s.answer = ctx.interrupt(s.reason, "later", resume_at=datetime.fromisoformat(later))
        else:
            s.answer = ctx.interrupt(s.reason, "a question")
        return END

    return wf


REGISTRY = WorkflowRegistry(asking())
MATRIX_WORKFLOWS = f"{__name__}:REGISTRY"
COMPLETE_ARGS = ("--workflows", MATRIX_WORKFLOWS)


class World:
    """One database: tenants acme and globex with a principal per role, a platform
    administrator, and factories of fresh objects in acme."""

    def __init__(self, app: Tether, url: str) -> None:
        self.app = app
        self.url = url
        self.worker = app.executor(REGISTRY, owner="matrix")
        self.who: dict[tuple[str, Role], Principal] = {}
        for tenant in (OWN, OTHER):
            app.tenants.create(tenant, admin=f"{tenant}-admin")
            admin = app.tenants.principal(tenant, f"{tenant}-admin")
            for role in Role:
                app.tenants.grant(admin, f"{tenant}-{role.value}", [role.value])
                self.who[(tenant, role)] = app.tenants.principal(tenant, f"{tenant}-{role.value}")
            app.tenants.grant(admin, f"{tenant}-starter", ["agent"])
        self.admin = self.who[(OWN, Role.ADMIN)]
        self.starter = app.tenants.principal(OWN, STARTER)
        self.platform = app.tenants.add_platform_admin("platform-admin").as_principal()
        app.procedures.publish(self.admin, PROCEDURES)
        for tenant in (OWN, OTHER):
            app.webhooks.allow(self.who[(tenant, Role.ADMIN)], HOOKS)
        self.notes = 0
        self.graphs = 0
        self.items = 0
        self.shared = self.make_targets()

    # -- fresh objects in acme -----------------------------------------------------------

    def run(self) -> str:
        return self.app.runs.start(self.starter, REGISTRY.get("asking"), Ask()).run_id

    def wait(self, reason: str) -> str:
        run = self.app.runs.start(self.starter, REGISTRY.get("asking"), Ask(reason=reason))
        parked = self.worker.execute(OWN, run.run_id)
        assert parked.wait_id is not None, parked
        return parked.wait_id

    def scheduled(self) -> str:
        """A run parked until later, which an operator may put back in the queue now."""
        run = self.app.runs.start(
            self.starter, REGISTRY.get("asking"), Ask(reason="scheduled_resume")
        )
        self.worker.execute(OWN, run.run_id)
        return run.run_id

    def cancelled(self) -> str:
        """A cancelled run, which an operator may retry."""
        run_id = self.run()
        self.app.runbook.cancel(self.admin, run_id, reason="made to be retried")
        return run_id

    def memory(self, scope: Scope = Scope.USER, *, held: bool = False) -> str:
        proposer = self.who[(OWN, Role.AGENT)] if held else self.admin
        decision = self.app.memory.propose(
            proposer,
            MemoryProposal(
                text="acme-secret: the claimant owns a cargo bike",
                kind=MemoryKind.CONSTRAINT if scope is Scope.TENANT else MemoryKind.FACT,
                scope=scope,
                scope_id="u-1" if scope is Scope.USER else OWN,
                subjects=["u-1"],
                source_type=SourceType.HUMAN,
                confidence=0.9,
                fact_key=None,
            ),
        )
        assert decision.memory_id is not None, decision
        return decision.memory_id

    def thread(self) -> str:
        thread = self.app.threads.create(self.admin, "u-1", title="acme-secret thread")
        turns = self.app.threads.append_many(
            self.admin,
            thread.thread_id,
            [NewTurn(role="user", content=f"acme-secret {n}", ref="call-1") for n in range(3)],
        )
        self.turn = turns[0].turn_id
        return thread.thread_id

    def session(self) -> str:
        session = self.thread()
        self.app.working.set(self.admin, session, "draft", "acme-secret draft")
        return session

    def endpoint(self) -> str:
        return self.app.webhooks.add_endpoint(self.admin, f"{HOOKS}hook").endpoint_id

    def held_run(self) -> str:
        run_id = self.run()
        self.app.retention.hold(self.admin, run_id, reason="acme-secret litigation")
        return run_id

    def note(self) -> str:
        """The digest of a fresh operator note (the reason of a legal hold)."""
        self.notes += 1
        reason = f"acme-secret reason {self.notes}"
        self.app.retention.hold(self.admin, self.run(), reason=reason)
        return self.app.notes.digest(OWN, reason)

    def delivery(self) -> str:
        """A queued (not failed) delivery: retrying it is a conflict, after the check."""
        self.app.webhooks.notify(self.admin, "run.stuck", self.run(), {"cause": "test"})
        return self.app.webhooks.deliveries(self.admin)[0].delivery_id

    def api_key(self) -> str:
        return self.app.api_keys.create(self.admin, STARTER, name="acme-secret key").key.key_id

    def graph(self) -> str:
        """A LangGraph thread with one checkpoint."""
        self.graphs += 1
        thread_id = f"acme-secret-graph-{self.graphs}"
        self.app.graphs.write(self.admin, [graph_checkpoint(thread_id)])
        return thread_id

    def graph_run(self) -> str:
        """The run of a LangGraph thread with one checkpoint."""
        run = self.app.graphs.thread_run(self.admin, self.graph())
        assert run is not None
        return run.run_id

    def store_item(self) -> str:
        """A key of LangGraph's store (namespace :data:`STORE_NS`), a memory of u-1."""
        self.items += 1
        key = f"acme-secret-item-{self.items}"
        value = {"text": f"acme-secret: u-1 prefers tea ({self.items})"}
        self.app.graph_store.put(self.admin, STORE_NS, key, value, scope="user", scope_id="u-1")
        return key

    def make_targets(self) -> dict[str, str]:
        return {
            "run": self.run(),
            "clarification": self.wait("clarification_required"),
            "external": self.wait("external_dependency"),
            "review": self.wait("human_review"),
            "approval": self.wait("approval"),
            "memory": self.memory(),
            "tenant_memory": self.memory(Scope.TENANT),
            "held": self.memory(Scope.TENANT, held=True),
            "scheduled": self.scheduled(),
            "cancelled": self.cancelled(),
            "thread": self.thread(),
            "session": self.session(),
            "turn": self.turn,
            "endpoint": self.endpoint(),
            "held_run": self.held_run(),
            "note": self.note(),
            "delivery": self.delivery(),
            "api_key": self.api_key(),
            "graph": self.graph(),
            "graph_run": self.graph_run(),
            "store_item": self.store_item(),
        }

    def audit_length(self) -> int:
        return self.app.tenants.get(OWN).audit_entries


Call = Callable[[Tether, Principal, dict[str, str]], Any]


@dataclass(frozen=True)
class Case:
    operation: str
    call: Call
    fresh: tuple[str, ...] = ()
    """Targets this call changes, made anew for each cell."""
    rule: Callable[[Principal], bool] | None = None
    """The map's rule beyond the operation's permission (waits, memory scopes)."""


def _passes(check: Callable[[], None]) -> bool:
    try:
        check()
    except PermissionDenied:
        return False
    return True


def wait_rule(reason: str) -> Callable[[Principal], bool]:
    return lambda who: _passes(
        lambda: check_wait_answer(
            who, reason=reason, started_by=STARTER, addressee=STARTER, settles_effect=False
        )
    )


def scope_rule(scope: str, what: str) -> Callable[[Principal], bool]:
    return lambda who: _passes(lambda: check_memory_change(who, scope, what=what))


def approval_rule(who: Principal) -> bool:
    return who.has_role(Role.APPROVER)


def _state_after_check(call: Call) -> Call:
    """``call``, where a :class:`Conflict` or :class:`NotFound` about the object's state
    (checked after the permission: nothing to retry, release or remove) counts as
    allowed."""

    def tolerant(app: Tether, who: Principal, targets: dict[str, str]) -> Any:
        try:
            return call(app, who, targets)
        except (Conflict, NotFound):
            return None

    return tolerant


def graph_checkpoint(thread_id: str) -> GraphCheckpointWrite:
    checkpoint = {"channel_versions": {}, "id": "c1", "ts": "", "v": 1, "versions_seen": {}}
    return GraphCheckpointWrite(
        checkpoint=GraphCheckpointRow(
            thread_id=thread_id,
            checkpoint_ns="",
            checkpoint_id="c1",
            parent_checkpoint_id=None,
            checkpoint_json=canonical.dumps(checkpoint),
            metadata_json="{}",
        ),
        blobs=[],
    )


def _store_put(app: Tether, who: Principal) -> None:
    """A store write; the policy refusing it (a platform administrator writes only global
    memory) is the policy's answer, after the permission."""
    with contextlib.suppress(MemoryWriteRefused):
        app.graph_store.put(
            who, ("user", "u-6"), "k", {"text": "likes tea"}, scope="user", scope_id="u-6"
        )


def _proposal() -> MemoryProposal:
    return MemoryProposal(
        text="The claimant prefers email",
        scope=Scope.USER,
        scope_id="u-2",
        source_type=SourceType.HUMAN,
        confidence=0.9,
    )


CASES: list[Case] = [
    Case("runs.start", lambda a, w, t: a.runs.start(w, REGISTRY.get("asking"), Ask())),
    Case("runs.stuck", lambda a, w, t: a.runs.stuck(w)),
    Case("runs.get", lambda a, w, t: a.runs.get(w, t["run"])),
    Case("platform.tenants", lambda a, w, t: a.platform.tenants(w)),
    Case("platform.runs", lambda a, w, t: a.platform.runs(w, OWN, RunQuery(limit=5))),
    Case("runs.all", lambda a, w, t: a.runs.all(w)),
    Case("runs.page", lambda a, w, t: a.runs.page(w, RunQuery(workflow="asking", limit=5))),
    Case("runs.events", lambda a, w, t: a.runs.events(w, t["run"])),
    Case("runs.checkpoints", lambda a, w, t: a.runs.checkpoints(w, t["run"])),
    Case("runs.journal", lambda a, w, t: a.runs.journal(w, t["run"])),
    Case("runs.state", lambda a, w, t: a.runs.state(w, t["run"])),
    Case("runs.waits", lambda a, w, t: a.runs.waits(w)),
    Case("runs.wait", lambda a, w, t: a.runs.wait(w, t["clarification"])),
    Case("runs.handoff", lambda a, w, t: a.runs.handoff(w, t["run"])),
    Case("runs.handoff_document", lambda a, w, t: a.runs.handoff_document(w, t["run"])),
    Case(
        "runs.answer",
        lambda a, w, t: a.runs.answer(w, t["clarification"], "yes"),
        ("clarification",),
        wait_rule("clarification_required"),
    ),
    Case(
        "runs.answer",
        lambda a, w, t: a.runs.answer(w, t["external"], "back"),
        ("external",),
        wait_rule("external_dependency"),
    ),
    Case(
        "runs.answer",
        lambda a, w, t: a.runs.answer(w, t["review"], {"allow": True}),
        ("review",),
        wait_rule("human_review"),
    ),
    Case(
        "runs.decide",
        lambda a, w, t: a.runs.decide(w, t["approval"], approve=True),
        ("approval",),
        approval_rule,
    ),
    Case("runbook.inspect", lambda a, w, t: a.runbook.inspect(w, t["run"])),
    Case("runbook.plan_fork", lambda a, w, t: a.runbook.plan_fork(w, t["run"], checkpoint=0)),
    Case("runbook.pause", lambda a, w, t: a.runbook.pause(w, t["run"], reason="r"), ("run",)),
    Case(
        "runbook.resume",
        lambda a, w, t: a.runbook.resume(w, t["scheduled"], reason="r"),
        ("scheduled",),
    ),
    Case("runbook.cancel", lambda a, w, t: a.runbook.cancel(w, t["run"], reason="r"), ("run",)),
    Case(
        "runbook.retry",
        lambda a, w, t: a.runbook.retry(w, t["cancelled"], reason="r"),
        ("cancelled",),
    ),
    Case(
        "runbook.retry_node",
        lambda a, w, t: a.runbook.retry_node(w, t["run"], reason="r"),
        ("run",),
    ),
    Case(
        "runbook.skip",
        lambda a, w, t: a.runbook.skip(
            w, t["run"], next_node="ask", reason="r", workflows=REGISTRY
        ),
        ("run",),
    ),
    Case(
        "runbook.complete",
        lambda a, w, t: a.runbook.complete(
            w, t["run"], output={"answer": "by hand"}, reason="r", workflows=REGISTRY
        ),
        ("run",),
    ),
    Case(
        "runbook.fork",
        lambda a, w, t: a.runbook.fork(w, t["run"], checkpoint=0, reason="r", workflows=REGISTRY),
    ),
    Case("runs.set_concurrency_limit", lambda a, w, t: a.runs.set_concurrency_limit(w, None)),
    Case("runs.concurrency_limit", lambda a, w, t: a.runs.concurrency_limit(w)),
    Case("inbox.send", lambda a, w, t: a.inbox.send(w, t["run"], {"hi": 1}), ("run",)),
    Case("inbox.messages", lambda a, w, t: a.inbox.messages(w, t["run"])),
    Case("retention.set_policy", lambda a, w, t: a.retention.set_policy(w, "asking", 30)),
    Case(
        "retention.remove_policy",
        _state_after_check(lambda a, w, t: a.retention.remove_policy(w, "*")),
    ),
    Case("retention.policies", lambda a, w, t: a.retention.policies(w)),
    Case("retention.hold", lambda a, w, t: a.retention.hold(w, t["run"], reason="audit"), ("run",)),
    Case(
        "retention.release",
        _state_after_check(lambda a, w, t: a.retention.release(w, t["held_run"], reason="settled")),
        ("held_run",),
    ),
    Case("retention.holds", lambda a, w, t: a.retention.holds(w)),
    Case("retention.gc", lambda a, w, t: a.retention.gc(w, dry_run=True)),
    Case("housekeeping.run", lambda a, w, t: a.housekeeping.run(w, owner="matrix")),
    Case("notes.read", lambda a, w, t: a.notes.read(w, t["note"])),
    Case("notes.erase", lambda a, w, t: a.notes.erase(w, t["note"]), ("note",)),
    Case("webhooks.signing_secret", lambda a, w, t: a.webhooks.signing_secret(w)),
    Case("webhooks.allow", lambda a, w, t: a.webhooks.allow(w, "https://hooks.example/")),
    Case(
        "webhooks.disallow",
        _state_after_check(lambda a, w, t: a.webhooks.disallow(w, "https://gone.example/")),
    ),
    Case("webhooks.allowlist", lambda a, w, t: a.webhooks.allowlist(w)),
    Case("webhooks.add_endpoint", lambda a, w, t: a.webhooks.add_endpoint(w, f"{HOOKS}x")),
    Case(
        "webhooks.remove_endpoint",
        lambda a, w, t: a.webhooks.remove_endpoint(w, t["endpoint"]),
        ("endpoint",),
    ),
    Case("webhooks.endpoints", lambda a, w, t: a.webhooks.endpoints(w)),
    Case("webhooks.deliveries", lambda a, w, t: a.webhooks.deliveries(w)),
    Case(
        "webhooks.retry",
        _state_after_check(lambda a, w, t: a.webhooks.retry(w, t["delivery"])),
    ),
    Case(
        "webhooks.notify",
        lambda a, w, t: a.webhooks.notify(w, "run.stuck", t["run"], {}),
        ("run",),
    ),
    Case("graphs.write", lambda a, w, t: a.graphs.write(w, [graph_checkpoint("g-new")])),
    Case("graphs.writer", lambda a, w, t: a.graphs.writer(w).write([graph_checkpoint("g-w")])),
    Case("graphs.timeline", lambda a, w, t: a.graphs.timeline(w, t["graph_run"])),
    Case("graphs.checkpoint", lambda a, w, t: a.graphs.checkpoint(w, t["graph"])),
    Case("graphs.checkpoints", lambda a, w, t: a.graphs.checkpoints(w)),
    Case("graphs.thread_run", lambda a, w, t: a.graphs.thread_run(w, t["graph"])),
    Case("graphs.resume_values", lambda a, w, t: a.graphs.resume_values(w, t["graph"])),
    Case("graphs.delete_thread", lambda a, w, t: a.graphs.delete_thread(w, t["graph"]), ("graph",)),
    Case("graphs.delete_for_runs", lambda a, w, t: a.graphs.delete_for_runs(w, ["lg-run-1"])),
    Case("graphs.copy_thread", lambda a, w, t: a.graphs.copy_thread(w, t["graph"], "g-copy")),
    Case("graphs.prune", lambda a, w, t: a.graphs.prune(w, [t["graph"]]), ("graph",)),
    Case("graph_store.put", lambda a, w, t: _store_put(a, w)),
    Case("graph_store.opt_out", lambda a, w, t: a.graph_store.opt_out(w, "a cache")),
    Case("graph_store.get", lambda a, w, t: a.graph_store.get(w, STORE_NS, t["store_item"])),
    Case("graph_store.search", lambda a, w, t: a.graph_store.search(w, ("user",))),
    Case("graph_store.namespaces", lambda a, w, t: a.graph_store.namespaces(w)),
    Case(
        "graph_store.delete",
        lambda a, w, t: a.graph_store.delete(w, STORE_NS, t["store_item"]),
        ("store_item",),
        scope_rule("user", "forget"),
    ),
    Case("graph_store.sweep", lambda a, w, t: a.graph_store.sweep(w)),
    Case("memory.policy", lambda a, w, t: a.memory.policy(w)),
    Case("memory.configure", lambda a, w, t: a.memory.configure(w, PolicyConfig())),
    Case("memory.grant_consent", lambda a, w, t: a.memory.grant_consent(w)),
    Case("memory.revoke_consent", lambda a, w, t: a.memory.revoke_consent(w)),
    Case("memory.propose", lambda a, w, t: a.memory.propose(w, _proposal())),
    Case("memory.propose_many", lambda a, w, t: a.memory.propose_many(w, [_proposal()])),
    Case(
        "memory.approve",
        lambda a, w, t: a.memory.approve(w, t["held"]),
        ("held",),
        scope_rule("tenant", "approve"),
    ),
    Case("memory.pending", lambda a, w, t: a.memory.pending(w)),
    Case(
        "memory.reject",
        lambda a, w, t: a.memory.reject(w, t["held"]),
        ("held",),
        scope_rule("tenant", "reject"),
    ),
    Case(
        "memory.correct",
        lambda a, w, t: a.memory.correct(w, t["memory"], "The claimant owns two bikes"),
        ("memory",),
    ),
    Case("memory.confirm", lambda a, w, t: a.memory.confirm(w, t["memory"])),
    Case(
        "memory.contradict",
        lambda a, w, t: a.memory.contradict(w, t["tenant_memory"]),
        ("tenant_memory",),
        scope_rule("tenant", "contradict"),
    ),
    Case(
        "memory.forget",
        lambda a, w, t: a.memory.forget(w, t["memory"]),
        ("memory",),
        scope_rule("user", "forget"),
    ),
    Case(
        "memory.forget",
        lambda a, w, t: a.memory.forget(w, t["tenant_memory"]),
        ("tenant_memory",),
        scope_rule("tenant", "forget"),
    ),
    Case("memory.invalidate_source", lambda a, w, t: a.memory.invalidate_source(w, "doc:1", "2")),
    Case("memory.place_hold", lambda a, w, t: a.memory.place_hold(w, Scope.USER, "u-9", "case")),
    Case("memory.retention_cycle", lambda a, w, t: a.memory.retention_cycle(w)),
    Case("memory.reembed", lambda a, w, t: a.memory.reembed(w)),
    Case("memory.get", lambda a, w, t: a.memory.get(w, t["memory"])),
    Case("memory.history", lambda a, w, t: a.memory.history(w, t["memory"])),
    Case("memory.in_scopes", lambda a, w, t: a.memory.in_scopes(w, [(Scope.USER, "u-1")])),
    Case(
        "memory.recall",
        lambda a, w, t: a.memory.recall(w, "cargo bike", [(Scope.USER, "u-1")]).hits,
    ),
    Case("memory.recalls", lambda a, w, t: a.memory.recalls(w, memory_id=t["memory"])),
    Case(
        "threads.create",
        lambda a, w, t: a.threads.create(w, "u-3", title="new"),
    ),
    Case("threads.get", lambda a, w, t: a.threads.get(w, t["thread"])),
    Case("threads.all", lambda a, w, t: a.threads.all(w)),
    Case(
        "threads.append",
        lambda a, w, t: a.threads.append(w, t["thread"], NewTurn(role="user", content="hi")),
    ),
    Case(
        "threads.append_many",
        lambda a, w, t: a.threads.append_many(w, t["thread"], [NewTurn(role="user", content="x")]),
    ),
    Case("threads.turns", lambda a, w, t: a.threads.turns(w, t["thread"])),
    Case("threads.last_turns", lambda a, w, t: a.threads.last_turns(w, t["thread"], 2)),
    Case("threads.tail", lambda a, w, t: a.threads.tail(w, t["thread"], 2)),
    Case("threads.get_turn", lambda a, w, t: a.threads.get_turn(w, t["turn"])),
    Case("threads.find_turns", lambda a, w, t: a.threads.find_turns(w, t["thread"], "call-1")),
    Case("threads.summaries", lambda a, w, t: a.threads.summaries(w, t["thread"])),
    Case(
        "threads.summarize",
        lambda a, w, t: a.threads.summarize(w, t["thread"], through_seq=2),
        ("thread",),
    ),
    Case("threads.retention_cycle", lambda a, w, t: a.threads.retention_cycle(w)),
    Case("threads.export_user", lambda a, w, t: a.threads.export_user(w, "u-1")),
    Case("threads.erase_user", lambda a, w, t: a.threads.erase_user(w, "u-8")),
    Case("working.set", lambda a, w, t: a.working.set(w, t["session"], "k", 1), ("session",)),
    Case("working.get", lambda a, w, t: a.working.get(w, t["session"], "draft")),
    Case("working.entry", lambda a, w, t: a.working.entry(w, t["session"], "draft")),
    Case("working.get_many", lambda a, w, t: a.working.get_many(w, t["session"], ["draft"])),
    Case("working.items", lambda a, w, t: a.working.items(w, t["session"])),
    Case("working.entries", lambda a, w, t: a.working.entries(w, t["session"])),
    Case("working.keys", lambda a, w, t: a.working.keys(w, t["session"])),
    Case(
        "working.touch",
        lambda a, w, t: a.working.touch(w, t["session"], "draft", ttl_s=60),
        ("session",),
    ),
    Case(
        "working.delete", lambda a, w, t: a.working.delete(w, t["session"], "draft"), ("session",)
    ),
    Case("working.clear", lambda a, w, t: a.working.clear(w, t["session"]), ("session",)),
    Case(
        "working.export_sessions",
        lambda a, w, t: a.working.export_sessions(w, [t["session"]]),
    ),
    Case(
        "working.erase_sessions",
        lambda a, w, t: a.working.erase_sessions(w, [t["session"]]),
        ("session",),
    ),
    Case("procedures.publish", lambda a, w, t: a.procedures.publish(w, PROCEDURES)),
    Case("procedures.current", lambda a, w, t: a.procedures.current(w)),
    Case("procedures.history", lambda a, w, t: a.procedures.history(w)),
    Case("procedures.render_for_context", lambda a, w, t: a.procedures.render_for_context(w)),
    Case("audit.entries", lambda a, w, t: a.audit.entries(w)),
    Case("audit.latest", lambda a, w, t: a.audit.latest(w)),
    Case("tenants.principals", lambda a, w, t: a.tenants.principals(w)),
    Case("tenants.grant", lambda a, w, t: a.tenants.grant(w, "newcomer", ["viewer"])),
    Case("api_keys.create", lambda a, w, t: a.api_keys.create(w, STARTER, ["agent"])),
    Case("api_keys.all", lambda a, w, t: a.api_keys.all(w, include_revoked=True)),
    Case("api_keys.revoke", lambda a, w, t: a.api_keys.revoke(w, t["api_key"]), ("api_key",)),
    Case("subjects.export", lambda a, w, t: a.subjects.export(w, "u-1")),
    Case("subjects.erase", lambda a, w, t: a.subjects.erase(w, "u-7")),
    Case("context.build", lambda a, w, t: a.context.build(w, t["thread"], budget=4000)),
]


PLATFORM_VIEWS = frozenset({"platform.tenants", "platform.runs"})
"""Operations that exist to show a platform administrator every tenant's run rows: the
one place a principal of another tenant sees ``acme``'s data, and only this one."""

INFRASTRUCTURE = frozenset({"storage", "settings", "clock", "ids", "keyring"})
"""Attributes of ``Tether`` that are not services (no operation of theirs is public API)."""


def public_operations(app: Tether) -> set[str]:
    """``service.method`` for every public method of every service on ``app``."""
    found: set[str] = set()
    for service, value in vars(app).items():
        if service.startswith("_") or service in INFRASTRUCTURE:
            continue
        if not type(value).__module__.startswith("tether."):
            continue
        cls = type(value)
        for name in dir(cls):
            static = inspect.getattr_static(cls, name)
            if name.startswith("_") or isinstance(static, property):
                continue
            if callable(getattr(cls, name)):
                found.add(f"{service}.{name}")
    return found


def command_paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every leaf command below ``command`` (lazily loaded groups loaded)."""
    names = command.list_commands(None) if hasattr(command, "list_commands") else []
    if not names:
        yield path
    for name in sorted(names):
        yield from command_paths(command.get_command(None, name), (*path, name))


COMMANDS = sorted(" ".join(path) for path in command_paths(typer.main.get_command(cli_app)))


def test_every_public_operation_and_command_is_in_the_map(tmp_path: Path) -> None:
    app, _ = Tether.migrate(url=f"sqlite:///{tmp_path / 'map.db'}")
    with app:
        found = public_operations(app)

    assert sorted(found - set(OPERATIONS)) == [], "public operations missing from the map"
    assert sorted(set(OPERATIONS) - found) == [], "the map names operations that do not exist"
    assert sorted(set(COMMANDS) - set(CLI_COMMANDS)) == [], "CLI commands missing from the map"
    assert sorted(set(CLI_COMMANDS) - set(COMMANDS)) == [], "the map names missing commands"
    for operation in CLI_COMMANDS.values():
        assert operation == "maintenance" or operation in OPERATIONS


def test_every_operation_that_takes_a_principal_has_a_case() -> None:
    needing = {op for op, permission in OPERATIONS.items() if permission not in NO_PRINCIPAL}
    assert needing - {case.operation for case in CASES} == set()


def test_operations_without_a_principal_take_none(tmp_path: Path) -> None:
    """What the map calls maintenance or files takes no principal: it cannot be reached by
    a caller who only holds a principal (the CLI's maintenance commands take no --as)."""
    app, _ = Tether.migrate(url=f"sqlite:///{tmp_path / 'map.db'}")
    with app:
        for operation, permission in OPERATIONS.items():
            service, method = operation.split(".")
            if method.endswith("_txn"):
                continue  # takes an open transaction: callable only from inside Tether
            parameters = inspect.signature(getattr(getattr(app, service), method)).parameters
            takes_principal = any(name in ("principal", "by") for name in parameters)
            assert takes_principal is (permission not in NO_PRINCIPAL), operation
    for command in COMMANDS:
        options = {opt for param in _command(command).params for opt in getattr(param, "opts", [])}
        needs = command_permission(command) not in NO_PRINCIPAL
        assert ("--as" in options) is needs, command


def _command(command: str) -> Any:
    found = typer.main.get_command(cli_app)
    for name in command.split():
        found = found.get_command(None, name)  # type: ignore[attr-defined]
    return found


# -- the matrix ------------------------------------------------------------------------


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def world(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    test_key_file: Path,
) -> Iterator[World]:
    """One database per backend for every cell of the matrix."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('matrix') / 'tether.db'}"
        Tether.migrate(load_settings(url=url, key_file=test_key_file))[0].close()
        dbname = None
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        template: str = request.getfixturevalue("postgres_template")
        dbname = server.create_database(template=template)
        url = server.url(dbname)
    app = Tether.open(
        load_settings(url=url, key_file=test_key_file, embedder="none"),
        clock=FakeClock(),
        embedder=HashingEmbedder(),
    )
    try:
        yield World(app, url)
    finally:
        app.close()
        if dbname is not None:
            server.drop_database(dbname)


ACTORS = (
    [(OWN, role) for role in Role]
    + [(OTHER, role) for role in Role]
    + [(GLOBAL_TENANT, Role.ADMIN)]
)


def expected_own(case: Case, who: Principal) -> bool:
    allowed = allows(who, OPERATIONS[case.operation])
    return allowed and (case.rule is None or case.rule(who))


def _actor(world: World, tenant: str, role: Role) -> Principal:
    return world.platform if tenant == GLOBAL_TENANT else world.who[(tenant, role)]


def _targets(world: World, fresh_names: tuple[str, ...]) -> dict[str, str]:
    if not fresh_names:
        return world.shared
    fresh = dict(world.shared)
    made = {
        "run": world.run,
        "clarification": lambda: world.wait("clarification_required"),
        "external": lambda: world.wait("external_dependency"),
        "review": lambda: world.wait("human_review"),
        "approval": lambda: world.wait("approval"),
        "memory": world.memory,
        "tenant_memory": lambda: world.memory(Scope.TENANT),
        "held": lambda: world.memory(Scope.TENANT, held=True),
        "thread": world.thread,
        "session": world.session,
        "scheduled": world.scheduled,
        "cancelled": world.cancelled,
        "endpoint": world.endpoint,
        "held_run": world.held_run,
        "note": world.note,
        "api_key": world.api_key,
        "graph": world.graph,
        "store_item": world.store_item,
    }
    for name in fresh_names:
        fresh[name] = made[name]()
    return fresh


def _case_id(case: Case) -> str:
    return case.operation + (f"[{case.fresh[0]}]" if case.fresh else "")


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_each_role_in_its_own_tenant_gets_what_the_map_says(world: World, case: Case) -> None:
    wrong = []
    for role in Role:
        who = world.who[(OWN, role)]
        expected = expected_own(case, who)
        targets = _targets(world, case.fresh)
        before = world.audit_length()
        try:
            case.call(world.app, who, targets)
            outcome = True
        except PermissionDenied:
            outcome = False
            if world.audit_length() != before:
                wrong.append(f"{role.value}: denied but the trail grew")
        if outcome is not expected:
            wrong.append(f"{role.value}: expected {'allow' if expected else 'deny'}")
    assert wrong == [], case.operation


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_no_role_of_another_tenant_reaches_this_ones_objects(world: World, case: Case) -> None:
    wrong = []
    for tenant, role in ACTORS[len(Role) :]:
        who = _actor(world, tenant, role)
        targets = _targets(world, case.fresh)
        before = world.audit_length()
        permitted = allows(who, OPERATIONS[case.operation])
        try:
            result = case.call(world.app, who, targets)
        except PermissionDenied:
            if permitted and case.rule is None:
                wrong.append(f"{who.tenant_id}/{role.value}: denied though its role may")
        except NotFound:
            if not permitted:
                wrong.append(f"{who.tenant_id}/{role.value}: checked the object before the role")
        else:
            if not permitted:
                wrong.append(f"{who.tenant_id}/{role.value}: allowed without the permission")
            elif "acme" in repr(result) and not (
                case.operation in PLATFORM_VIEWS and who.tenant_id == GLOBAL_TENANT
            ):
                wrong.append(f"{who.tenant_id}/{role.value}: saw acme's data")
        if world.audit_length() != before:
            wrong.append(f"{who.tenant_id}/{role.value}: wrote to acme's trail")
    assert wrong == [], case.operation


# -- the CLI ---------------------------------------------------------------------------

EXAMPLE_PROCEDURES = str(Path(__file__).resolve().parents[2] / "examples" / "procedures")


@dataclass(frozen=True)
class CommandCase:
    command: str
    args: Callable[[dict[str, str]], list[str]]
    fresh: tuple[str, ...] = ()
    rule: Callable[[Principal], bool] | None = None


COMMAND_CASES = [
    CommandCase("principals add", lambda t: ["cli-newcomer", "--role", "viewer"]),
    CommandCase("principals ls", lambda t: []),
    CommandCase("audit ls", lambda t: []),
    CommandCase("api-keys create", lambda t: [STARTER, "--role", "agent"]),
    CommandCase("api-keys ls", lambda t: ["--include-revoked"]),
    CommandCase("api-keys revoke", lambda t: [t["api_key"]], ("api_key",)),
    CommandCase(
        "runs start", lambda t: ["asking", "--input", "{}", "--workflows", MATRIX_WORKFLOWS]
    ),
    CommandCase("runs stuck", lambda t: []),
    CommandCase("runs ls", lambda t: []),
    CommandCase("runs show", lambda t: [t["run"]]),
    CommandCase("runs timeline", lambda t: [t["run"]]),
    CommandCase("runs handoff", lambda t: [t["run"]]),
    CommandCase("runs inspect", lambda t: [t["run"]]),
    CommandCase("runs checkpoints", lambda t: [t["run"]]),
    CommandCase("runs pause", lambda t: [t["run"], "--reason", "r"], ("run",)),
    CommandCase("runs resume", lambda t: [t["scheduled"], "--reason", "r"], ("scheduled",)),
    CommandCase("runs cancel", lambda t: [t["run"], "--reason", "r"], ("run",)),
    CommandCase("runs retry", lambda t: [t["cancelled"], "--reason", "r"], ("cancelled",)),
    CommandCase("runs retry-node", lambda t: [t["run"], "--reason", "r"], ("run",)),
    CommandCase(
        "runs skip",
        lambda t: [t["run"], "--next", "ask", "--reason", "r", "--workflows", MATRIX_WORKFLOWS],
        ("run",),
    ),
    CommandCase(
        "runs complete",
        lambda t: [t["run"], "--output", '{"answer": "x"}', "--reason", "r", *COMPLETE_ARGS],
        ("run",),
    ),
    CommandCase(
        "runs fork",
        lambda t: [t["run"], "--checkpoint", "0", "--reason", "r", "--workflows", MATRIX_WORKFLOWS],
    ),
    CommandCase(
        "runs answer",
        lambda t: [t["clarification"], "--answer", "yes"],
        ("clarification",),
        wait_rule("clarification_required"),
    ),
    CommandCase("runs send", lambda t: [t["run"], "--message", '{"hi": 1}'], ("run",)),
    CommandCase("runs inbox", lambda t: [t["run"]]),
    CommandCase("retention set", lambda t: ["asking", "--days", "30"]),
    CommandCase("retention unset", lambda t: ["*"]),
    CommandCase("retention ls", lambda t: []),
    CommandCase("retention hold", lambda t: [t["run"], "--reason", "audit"], ("run",)),
    CommandCase(
        "retention release", lambda t: [t["held_run"], "--reason", "settled"], ("held_run",)
    ),
    CommandCase("gc", lambda t: ["--dry-run"]),
    CommandCase("housekeeping run", lambda t: []),
    CommandCase("webhooks allow", lambda t: ["https://hooks.example/"]),
    CommandCase("webhooks disallow", lambda t: ["https://gone.example/"]),
    CommandCase("webhooks secret", lambda t: []),
    CommandCase("webhooks add", lambda t: [f"{HOOKS}y"]),
    CommandCase("webhooks rm", lambda t: [t["endpoint"]], ("endpoint",)),
    CommandCase("webhooks endpoints", lambda t: []),
    CommandCase("webhooks ls", lambda t: []),
    CommandCase("webhooks retry", lambda t: [t["delivery"]]),
    CommandCase("memory pending", lambda t: []),
    CommandCase(
        "memory approve", lambda t: [t["held"]], ("held",), scope_rule("tenant", "approve")
    ),
    CommandCase("memory reject", lambda t: [t["held"]], ("held",), scope_rule("tenant", "reject")),
    CommandCase("memory consent", lambda t: []),
    CommandCase("approvals ls", lambda t: []),
    CommandCase("approvals show", lambda t: [t["approval"]]),
    CommandCase("approvals approve", lambda t: [t["approval"]], ("approval",), approval_rule),
    CommandCase("approvals reject", lambda t: [t["approval"]], ("approval",), approval_rule),
    CommandCase("memory propose", lambda t: ["The claimant prefers email", "--scope", "user:u-2"]),
    CommandCase("memory recall", lambda t: ["cargo bike", "--scope", "user:u-1"]),
    CommandCase("memory show", lambda t: [t["memory"]]),
    CommandCase("memory history", lambda t: [t["memory"]]),
    CommandCase("memory correct", lambda t: [t["memory"], "Two cargo bikes"], ("memory",)),
    CommandCase(
        "memory forget", lambda t: [t["memory"]], ("memory",), scope_rule("user", "forget")
    ),
    CommandCase("memory export", lambda t: ["u-1"]),
    CommandCase("memory erase", lambda t: ["u-6", "--yes"]),
    CommandCase("memory retention", lambda t: []),
    CommandCase("memory reembed", lambda t: []),
    CommandCase("memory policy show", lambda t: []),
    CommandCase("memory policy set", lambda t: ['{"confidence_threshold": 0.7}']),
    CommandCase("mcp", lambda t: []),
    CommandCase("procedures publish", lambda t: [EXAMPLE_PROCEDURES]),
    CommandCase("procedures show", lambda t: []),
    CommandCase("procedures history", lambda t: []),
    CommandCase("threads create", lambda t: ["u-4"]),
    CommandCase("threads ls", lambda t: []),
    CommandCase("threads show", lambda t: [t["thread"]]),
    CommandCase("threads append", lambda t: [t["thread"], "hello"]),
    CommandCase("context build", lambda t: [t["thread"], "--budget", "4000"]),
]


def test_every_command_that_takes_a_principal_has_a_case() -> None:
    needing = {c for c in COMMANDS if command_permission(c) not in NO_PRINCIPAL}
    assert needing == {case.command for case in COMMAND_CASES}


@pytest.mark.parametrize("case", COMMAND_CASES, ids=[c.command for c in COMMAND_CASES])
def test_each_cli_command_answers_each_role_as_the_map_says(
    world: World, case: CommandCase, test_key_file: Path
) -> None:
    runner = CliRunner()
    env = {
        "TETHER_URL": world.url,
        "TETHER_KEY_FILE": str(test_key_file),
        "TETHER_EMBEDDER": "none",
    }
    permission = command_permission(case.command)
    wrong = []
    for tenant, role in ACTORS:
        who = _actor(world, tenant, role)
        targets = _targets(world, case.fresh)
        args = [*case.command.split(), *case.args(targets)]
        args += ["--tenant", who.tenant_id, "--as", who.principal_id]
        result = runner.invoke(cli_app, args, env=env)
        permitted = allows(who, permission)
        if tenant == OWN:
            allowed = permitted and (case.rule is None or case.rule(who))
            # Allowed: anything but a refusal or a crash (`memory reembed` without an
            # embedder is invalid_input, exit 3); refused: permission_denied, exit 6.
            if (allowed and result.exit_code in (1, 6)) or (not allowed and result.exit_code != 6):
                expected = "allow" if allowed else "deny"
                wrong.append(f"{tenant}/{role.value}: exit {result.exit_code}, {expected} expected")
        elif not permitted and result.exit_code != 6:
            wrong.append(f"{tenant}/{role.value}: exit {result.exit_code}, not denied")
        elif permitted and (result.exit_code in (1, 6) or "acme" in result.stdout):
            wrong.append(f"{tenant}/{role.value}: exit {result.exit_code} or acme's data shown")
    assert wrong == [], case.command
