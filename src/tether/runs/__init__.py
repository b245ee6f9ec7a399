"""Durable runs: workflows of nodes, checkpoints, journaled effects, interrupts, approvals.

Only the models load with the package (storage imports them); the executor, the context,
the service and workflows load on first use, so ``from tether.runs import Executor``
works without importing the engine into every module that needs a run's row type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports
from tether.runs.models import (
    END,
    ApprovalDecision,
    InterruptReason,
    Risk,
    Run,
    RunStatus,
    Usage,
    Wait,
    WaitStatus,
)

if TYPE_CHECKING:
    from tether.runs.context import RunContext
    from tether.runs.engine import Executor
    from tether.runs.handoff import HandoffDocument
    from tether.runs.inbox import Inbox, InboxMessage
    from tether.runs.retention import GcReport, RunRetention
    from tether.runs.service import Runs
    from tether.runs.signals import NOT_APPLIED
    from tether.runs.workflow import RetryPolicy, Workflow, WorkflowRegistry

__all__ = [
    "END",
    "NOT_APPLIED",
    "ApprovalDecision",
    "Executor",
    "GcReport",
    "HandoffDocument",
    "Inbox",
    "InboxMessage",
    "InterruptReason",
    "RetryPolicy",
    "Risk",
    "Run",
    "RunContext",
    "RunRetention",
    "RunStatus",
    "Runs",
    "Usage",
    "Wait",
    "WaitStatus",
    "Workflow",
    "WorkflowRegistry",
]

_EXPORTS = {
    "NOT_APPLIED": "tether.runs.signals",
    "RunContext": "tether.runs.context",
    "Executor": "tether.runs.engine",
    "HandoffDocument": "tether.runs.handoff",
    "Inbox": "tether.runs.inbox",
    "InboxMessage": "tether.runs.inbox",
    "GcReport": "tether.runs.retention",
    "RunRetention": "tether.runs.retention",
    "Runs": "tether.runs.service",
    "RetryPolicy": "tether.runs.workflow",
    "Workflow": "tether.runs.workflow",
    "WorkflowRegistry": "tether.runs.workflow",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
