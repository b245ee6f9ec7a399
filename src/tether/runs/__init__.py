"""Durable runs: workflows of nodes, checkpoints, journaled effects, interrupts, approvals."""

from __future__ import annotations

from tether.runs.context import NOT_APPLIED, RunContext
from tether.runs.engine import Executor
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
from tether.runs.service import Runs
from tether.runs.workflow import RetryPolicy, Workflow, WorkflowRegistry

__all__ = [
    "END",
    "NOT_APPLIED",
    "ApprovalDecision",
    "Executor",
    "InterruptReason",
    "RetryPolicy",
    "Risk",
    "Run",
    "RunContext",
    "RunStatus",
    "Runs",
    "Usage",
    "Wait",
    "WaitStatus",
    "Workflow",
    "WorkflowRegistry",
]
