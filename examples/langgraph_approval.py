"""A LangGraph graph that pays a refund only once a person approves it in Tether.

The graph gathers evidence (slow steps), asks for approval with ``request_approval``
(LangGraph's ``interrupt()``) and then pays. ``TetherSaver`` checkpoints every step in
Tether's database, so the process can be killed at any moment and the next one carries on
from the last checkpoint; the approval is an ordinary Tether approval request, decided
with the CLI (``tether approvals approve``) or the Python API, by someone other than the
agent that asked.

    export TETHER_URL=sqlite:///./tether.db
    python -m examples.langgraph_approval setup          # database, tenant, principals
    python -m examples.langgraph_approval run claim-7    # runs until the approval
    tether approvals ls --tenant acme --as boss
    tether approvals approve <id> --tenant acme --as boss
    python -m examples.langgraph_approval run claim-7    # resumes and pays

``run`` is the same command every time: it starts a new thread, continues one whose
process died, or resumes one whose approval was decided. Each node appends a line to the
file ``LANGGRAPH_EXAMPLE_LOG`` (if set), so a test can see what ran, in which process.
"""

from __future__ import annotations

import operator
import os
import sys
import time
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from tether import Tether
from tether.integrations.langgraph import TetherSaver, request_approval, resume_command
from tether.runs import RunStatus

TENANT = "acme"
AGENT = "refund-agent"
APPROVER = "boss"
EVIDENCE = ("photos", "invoice", "delivery_record", "customer_history")
STEP_SECONDS = float(os.environ.get("LANGGRAPH_EXAMPLE_STEP_SECONDS", "0.3"))


class Claim(TypedDict):
    claim_id: str
    amount: int
    evidence: Annotated[list[str], operator.add]
    log: Annotated[list[str], operator.add]


def note(line: str) -> None:
    """Record what ran (for whoever watches the example: a person, or the e2e test)."""
    path = os.environ.get("LANGGRAPH_EXAMPLE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {line}\n")


def gather(kind: str) -> Any:
    def node(state: Claim) -> dict[str, Any]:
        time.sleep(STEP_SECONDS)  # a slow lookup: a good moment to be killed
        note(f"gathered {kind}")
        return {"evidence": [f"{kind} for {state['claim_id']}"]}

    return node


def approve(state: Claim) -> dict[str, Any]:
    decision = request_approval(
        {"refund": state["amount"], "claim": state["claim_id"]},
        title=f"refund {state['amount']} EUR on claim {state['claim_id']}",
        rationale=f"{len(state['evidence'])} pieces of evidence support the claim",
        evidence=state["evidence"],
        risk="high",
        on_approve="the refund is paid",
        on_reject="the claim is closed without payment",
    )
    note(f"decision {decision['status']} by {decision['decided_by']}")
    return {"log": [f"refund {decision['status']} by {decision['decided_by']}"]}


def pay(state: Claim) -> dict[str, Any]:
    if not state["log"][-1].startswith("refund approved"):
        return {"log": ["closed without payment"]}
    note(f"paid {state['amount']}")
    return {"log": [f"paid {state['amount']} EUR"]}


def build(saver: TetherSaver) -> Any:
    builder = StateGraph(Claim)
    previous = START
    for kind in EVIDENCE:
        builder.add_node(kind, gather(kind))
        builder.add_edge(previous, kind)
        previous = kind
    builder.add_node("approve", approve)
    builder.add_node("pay", pay)
    builder.add_edge(previous, "approve")
    builder.add_edge("approve", "pay")
    builder.add_edge("pay", END)
    return builder.compile(checkpointer=saver)


def setup() -> None:
    """Migrate the database at ``TETHER_URL``; make the tenant, the agent and an approver."""
    app, _ = Tether.migrate()
    with app:
        if TENANT not in {t.tenant_id for t in app.tenants.all()}:
            app.tenants.create(TENANT, admin="admin")
        admin = app.tenants.principal(TENANT, "admin")
        app.tenants.grant(admin, AGENT, ["agent"])
        app.tenants.grant(admin, APPROVER, ["approver"])
    print(f"tenant {TENANT}: agent {AGENT!r}, approver {APPROVER!r}")


def run(thread_id: str, amount: int = 120) -> str:
    """Start, continue or resume the thread; its run's status afterwards."""
    with Tether.open() as app:
        agent = app.tenants.principal(TENANT, AGENT)
        saver = TetherSaver(app, agent)
        graph = build(saver)
        config = {"configurable": {"thread_id": thread_id}}
        state = graph.get_state(config)
        if state.created_at is None:
            note("started")
            graph.invoke(
                {"claim_id": thread_id, "amount": amount, "evidence": [], "log": []}, config
            )
        elif state.interrupts:
            command = resume_command(saver, thread_id)
            if command is not None:
                note("resumed after the decision")
                graph.invoke(command, config)
        elif state.next:
            note(f"continued before {', '.join(state.next)}")
            graph.invoke(None, config)
        run = app.graphs.thread_run(agent, thread_id)
        if run is None:
            raise SystemExit(f"thread {thread_id} has no run: nothing was checkpointed")
        if run.status is RunStatus.WAITING_FOR_APPROVAL:
            (wait,) = app.runs.waits(agent, run_id=run.run_id)
            print(f"waiting for approval {wait.wait_id}: {wait.message}")
        else:
            print(f"{run.status.value}: {'; '.join(graph.get_state(config).values['log'])}")
        return run.status.value


def main(argv: list[str]) -> int:
    if argv[:1] == ["setup"]:
        setup()
        return 0
    if len(argv) == 2 and argv[0] == "run":
        run(argv[1])
        return 0
    print(__doc__.split("\n\n")[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
