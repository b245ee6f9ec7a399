"""Human approval of a LangGraph step, decided in Tether.

Inside a node, :func:`request_approval` pauses the graph with ``interrupt()``; the
checkpointer (:class:`~tether.integrations.langgraph.checkpointer.TetherSaver`) turns the
interrupt into an approval request of the thread's run, which an approver decides with
``tether approvals approve <id>`` (or ``app.runs.decide``), as any other. Any process can
then resume the thread with :func:`resume_command`, which reads the decision back. An
``interrupt()`` with another value is a question, answered with ``tether runs answer``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.serde.types import INTERRUPT
from langgraph.types import Command, Interrupt, interrupt

from tether.integrations.langgraph.checkpointer import APPROVAL
from tether.principals import Role
from tether.runs.models import ApprovalRequest, Risk

if TYPE_CHECKING:
    from tether.integrations.langgraph.checkpointer import TetherSaver


def request_approval(
    action: Mapping[str, Any],
    *,
    rationale: str,
    title: str | None = None,
    evidence: Sequence[str] = (),
    risk: Risk | str = Risk.MEDIUM,
    alternatives: Sequence[str] = (),
    on_approve: str = "",
    on_reject: str = "",
    approver_role: Role | str = Role.APPROVER,
) -> dict[str, Any]:
    """Pause the graph until a person approves or rejects ``action`` in Tether.

    Call it inside a node of a graph checkpointed by ``TetherSaver``. Like any
    ``interrupt()``, the node runs again from its start when the graph resumes, and this
    call then returns the decision: ``{"approved": bool, "status": "approved" |
    "rejected", "decided_by": ..., "comment": ...}``.
    """
    request = ApprovalRequest(
        title=title or "approve the next step",
        action=dict(action),
        rationale=rationale,
        evidence=list(evidence),
        risk=Risk(risk),
        alternatives=list(alternatives),
        on_approve=on_approve,
        on_reject=on_reject,
    ).model_dump(mode="json")
    decision = interrupt(
        {"tether": APPROVAL, **request, "approver_role": Role(approver_role).value}
    )
    return dict(decision)


def resume_command(saver: TetherSaver, thread_id: str) -> Command[Any] | None:
    """The ``Command`` that resumes a thread whose interrupts were all decided in Tether,
    or ``None`` while one is still open (or the thread is not waiting).

    Example:
        >>> command = resume_command(saver, "claim-42")
        >>> if command is not None:
        ...     graph.invoke(command, {"configurable": {"thread_id": "claim-42"}})
    """
    latest = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if latest is None:
        return None
    waiting = {
        str(item.id)
        for _, channel, value in latest.pending_writes or []
        if channel == INTERRUPT
        for item in (value if isinstance(value, list | tuple) else [value])
        if isinstance(item, Interrupt)
    }
    if not waiting:
        return None
    decided = saver.app.graphs.resume_values(saver.principal, thread_id)
    if not waiting <= decided.keys():
        return None
    return Command(resume={interrupt_id: decided[interrupt_id] for interrupt_id in waiting})
