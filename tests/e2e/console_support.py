"""What the console tests share: workflows, a seeded database, the real server on a free
port, and a worker thread.

The database (SQLite, in a temporary directory) holds two tenants. ``acme`` has a
principal per role and an API key for each, claims waiting for an approval, two runs stuck
on an effect whose outcome nobody recorded (started two hours ago, with a clock set back),
memories (one of them hostile markup) and a held proposal; ``globex`` has a run of its own
and a key. The server is the application ``tether serve`` runs (``create_app``) under
uvicorn in a thread; the worker is the library's ``Worker`` on a thread of its own,
executing the claim workflow the way ``tether worker`` would.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import uvicorn
from pydantic import BaseModel

from tether import FakeClock, Tether
from tether.clock import SystemClock
from tether.config import load_settings
from tether.memory.models import MemoryProposal, Scope, SourceType
from tether.principals import Principal
from tether.runs import END, ApprovalDecision, RunContext, Workflow, WorkflowRegistry
from tether.runs.worker import Worker
from tether.server import create_app

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
"""Markup stored as data: the console must show it as text."""
DEADLINE_S = 30.0


class Claim(BaseModel):
    claim_id: str
    amount: int
    goal: str = ""
    note: str = ""
    approval: dict[str, Any] | None = None
    payment: dict[str, Any] | None = None
    outcome: str | None = None


def claim_workflow() -> Workflow[Claim]:
    """Review a claim, ask an approver to pay it, then pay it or tell the claimant."""
    wf: Workflow[Claim] = Workflow("claim", state=Claim)

    @wf.node(start=True)
    def review(ctx: RunContext, s: Claim) -> str:
        s.note = ctx.step(
            "draft",
            lambda: f"Pay {s.amount} EUR for claim {s.claim_id}" + f": {s.goal}" * bool(s.goal),
        )
        return "request_approval"

    @wf.node
    def request_approval(ctx: RunContext, s: Claim) -> str:
        decision = ctx.approval(
            {"pay": s.claim_id, "amount": s.amount},
            title=f"Pay claim {s.claim_id}",
            rationale=s.note,
            evidence=[f"claim:{s.claim_id}", "policy:payouts@2"],
            risk="high",
            alternatives=["ask for an independent assessment"],
            on_approve="the claim is paid and the run completes",
            on_reject="nothing is paid; the claimant is told and the run ends",
        )
        s.approval = decision.model_dump(mode="json")
        return "pay" if decision.approved else "notify_rejection"

    @wf.node
    def pay(ctx: RunContext, s: Claim) -> str:
        action = {"pay": s.claim_id, "amount": s.amount}
        s.payment = ctx.effect(
            "pay_claim",
            lambda key: {"paid": s.amount, "reference": key[-12:]},
            request=action,
            approval=ApprovalDecision.model_validate(s.approval),
        )
        s.outcome = "paid"
        return END

    @wf.node
    def notify_rejection(ctx: RunContext, s: Claim) -> str:
        ctx.effect("notify_claimant", lambda key: {"sent": "rejection"}, request=s.claim_id)
        s.outcome = "rejected: claimant notified"
        return END

    return wf


class Stalled(BaseModel):
    target: str


class Crash(BaseException):
    """A worker killed in the middle of an effect."""


def stalled_workflow() -> Workflow[Stalled]:
    """One effect that never returns the first time (the worker dies inside it)."""
    wf: Workflow[Stalled] = Workflow("stalled", state=Stalled)
    calls: list[str] = []

    def call(key: str) -> dict[str, str]:
        calls.append(key)
        if len(calls) == 1:
            raise Crash("the worker died inside the call")
        return {"done": key}

    @wf.node(start=True)
    def push(ctx: RunContext, s: Stalled) -> str:
        ctx.effect("push_refund", call, request={"target": s.target})
        return END

    return wf


CLAIMS = WorkflowRegistry(claim_workflow())
SERVED = WorkflowRegistry(claim_workflow(), stalled_workflow())
"""What the server knows (``tether serve --workflows``): the runbook's skip, complete and
fork need the workflow's code. The worker runs only claims."""
ROLES = {"sam": "approver", "olga": "operator", "vic": "viewer", "agent-1": "agent"}


@dataclass
class Seeded:
    """The seeded database: its URL, the API keys by principal, and what was made."""

    url: str
    key_file: Path
    keys: dict[str, str] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)
    """Claim id -> run id (acme)."""
    stuck_runs: list[str] = field(default_factory=list)
    """Two runs whose worker died inside an effect (stuck: ``effect_unanswered``)."""
    hostile_run: str = ""
    globex_run: str = ""
    memories: dict[str, str] = field(default_factory=dict)
    held_memory: str = ""


def _remember(app: Tether, who: Principal, text: str, scope: Scope, scope_id: str) -> str:
    decision = app.memory.propose(
        who,
        MemoryProposal(
            text=text, scope=scope, scope_id=scope_id, source_type=SourceType.HUMAN, confidence=0.9
        ),
    )
    assert decision.memory_id is not None, decision
    return decision.memory_id


def seed(directory: Path, key_file: Path) -> Seeded:
    url = f"sqlite:///{directory / 'console.db'}"
    settings = load_settings(url=url, key_file=key_file, embedder="none")
    Tether.migrate(settings)[0].close()
    seeded = Seeded(url=url, key_file=key_file)
    with Tether.open(settings) as app:
        for tenant, admin in (("acme", "alice"), ("globex", "gina")):
            app.tenants.create(tenant, admin=admin)
        alice = app.tenants.principal("acme", "alice")
        gina = app.tenants.principal("globex", "gina")
        for principal_id, role in ROLES.items():
            app.tenants.grant(alice, principal_id, [role])
        for principal_id in ("alice", *ROLES):
            seeded.keys[principal_id] = app.api_keys.create(alice, principal_id).secret
        seeded.keys["gina"] = app.api_keys.create(gina, "gina").secret
        root = app.tenants.add_platform_admin("root").as_principal()
        seeded.keys["root"] = app.api_keys.create(root, "root").secret
        agent = app.tenants.principal("acme", "agent-1")
        claim = CLAIMS.get("claim")
        executor = app.executor(CLAIMS, owner="seed")
        for claim_id, amount in (("C-1", 120), ("C-2", 980)):
            run = app.runs.start(agent, claim, Claim(claim_id=claim_id, amount=amount))
            executor.execute("acme", run.run_id)
            seeded.claims[claim_id] = run.run_id
        hostile = app.runs.start(agent, claim, Claim(claim_id="C-666", amount=1, goal=HOSTILE))
        executor.execute("acme", hostile.run_id)
        seeded.hostile_run = hostile.run_id
        seeded.globex_run = app.runs.start(gina, claim, Claim(claim_id="G-1", amount=5)).run_id
        seeded.memories["email"] = _remember(
            app, alice, "The claimant prefers email", Scope.USER, "u-1"
        )
        seeded.memories["hostile"] = _remember(app, alice, HOSTILE, Scope.USER, "u-1")
        held = app.memory.propose(
            agent,
            MemoryProposal(
                text="Claims under 100 EUR are paid without review",
                scope=Scope.TENANT,
                scope_id="acme",
                source_type=SourceType.MODEL_INFERENCE,
                confidence=0.8,
            ),
        )
        assert held.verdict.value == "held" and held.memory_id, held
        seeded.held_memory = held.memory_id
    seeded.stuck_runs = [_stuck_run(settings, target) for target in ("refund-77", "refund-78")]
    return seeded


def _stuck_run(settings: Any, target: str) -> str:
    """A run whose worker died inside an effect two hours ago: taken over, it waits for a
    person to say whether the effect happened (stuck: ``effect_unanswered``)."""
    clock = FakeClock(SystemClock().now() - timedelta(hours=2))
    with Tether.open(settings, clock=clock) as app:
        registry = WorkflowRegistry(stalled_workflow())
        olga = app.tenants.principal("acme", "olga")
        run = app.runs.start(olga, registry.get("stalled"), Stalled(target=target))
        executor = app.executor(registry, owner="doomed")
        with suppress(Crash):
            executor.execute("acme", run.run_id)
        clock.advance(timedelta(minutes=5))
        parked = app.executor(registry, owner="rescuer").execute("acme", run.run_id)
        assert parked.status.value == "paused", parked
        return run.run_id


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(check: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Served:
    base: str
    app: Tether
    seeded: Seeded


@contextmanager
def serve(seeded: Seeded) -> Iterator[Served]:
    """The HTTP application (API and console) under uvicorn on a free port, in a thread."""
    settings = load_settings(url=seeded.url, key_file=seeded.key_file, embedder="none")
    with Tether.open(settings) as app:
        port = free_port()
        config = uvicorn.Config(
            create_app(app, workflows=SERVED),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            access_log=False,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="console-server", daemon=True)
        thread.start()
        try:
            wait_until(lambda: server.started, "the server to start")
            yield Served(f"http://127.0.0.1:{port}", app, seeded)
        finally:
            server.should_exit = True
            thread.join(DEADLINE_S)


@contextmanager
def worker(app: Tether) -> Iterator[Worker]:
    """A worker executing claim runs on a thread of its own until the block ends."""
    running = Worker(app.executor(CLAIMS, owner="console-test-worker"), app.runs, poll_s=0.1)
    thread = threading.Thread(target=running.run, name="console-worker", daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.stop.set()
        thread.join(DEADLINE_S)
