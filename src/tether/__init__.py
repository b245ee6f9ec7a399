"""Tether: durable runs and governed memory for long-running AI agents.

The names below are the public API; each loads its submodule on first use, so importing
``tether`` is cheap. Everything else is internal and may move between releases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.app import Tether
    from tether.audit.chain import VerifyReport
    from tether.audit.log import AuditEntry
    from tether.clock import Clock, FakeClock, SystemClock
    from tether.config import Settings, load_settings
    from tether.context.models import ContextOptions
    from tether.errors import (
        ActionNotApproved,
        ConfigError,
        Conflict,
        ContextOverBudget,
        EffectForbidden,
        IntegrityViolation,
        InterruptExpired,
        InvalidInput,
        NotFound,
        PermissionDenied,
        StorageError,
        StorageUnavailable,
        SummarizerFailed,
        TetherError,
        WorkflowChanged,
    )
    from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType
    from tether.memory.recall import RecallHit
    from tether.principals import Principal, Role
    from tether.runs.context import RunContext
    from tether.runs.models import END, Run, RunStatus
    from tether.runs.workflow import RetryPolicy, Workflow, WorkflowRegistry
    from tether.threads.models import NewTurn, TurnRole

__version__ = "0.1.0"

_EXPORTS = {
    "Tether": "tether.app",
    "AuditEntry": "tether.audit.log",
    "VerifyReport": "tether.audit.chain",
    "Clock": "tether.clock",
    "FakeClock": "tether.clock",
    "SystemClock": "tether.clock",
    "Settings": "tether.config",
    "load_settings": "tether.config",
    "Principal": "tether.principals",
    "Role": "tether.principals",
    "END": "tether.runs.models",
    "Run": "tether.runs.models",
    "RunStatus": "tether.runs.models",
    "RunContext": "tether.runs.context",
    "RetryPolicy": "tether.runs.workflow",
    "Workflow": "tether.runs.workflow",
    "WorkflowRegistry": "tether.runs.workflow",
    "MemoryKind": "tether.memory.models",
    "MemoryProposal": "tether.memory.models",
    "Scope": "tether.memory.models",
    "SourceType": "tether.memory.models",
    "RecallHit": "tether.memory.recall",
    "NewTurn": "tether.threads.models",
    "TurnRole": "tether.threads.models",
    "ContextOptions": "tether.context.models",
    "TetherError": "tether.errors",
    "ActionNotApproved": "tether.errors",
    "ConfigError": "tether.errors",
    "Conflict": "tether.errors",
    "ContextOverBudget": "tether.errors",
    "EffectForbidden": "tether.errors",
    "IntegrityViolation": "tether.errors",
    "InterruptExpired": "tether.errors",
    "InvalidInput": "tether.errors",
    "NotFound": "tether.errors",
    "PermissionDenied": "tether.errors",
    "StorageError": "tether.errors",
    "StorageUnavailable": "tether.errors",
    "SummarizerFailed": "tether.errors",
    "WorkflowChanged": "tether.errors",
}

__all__ = [
    "END",
    "ActionNotApproved",
    "AuditEntry",
    "Clock",
    "ConfigError",
    "Conflict",
    "ContextOptions",
    "ContextOverBudget",
    "EffectForbidden",
    "FakeClock",
    "IntegrityViolation",
    "InterruptExpired",
    "InvalidInput",
    "MemoryKind",
    "MemoryProposal",
    "NewTurn",
    "NotFound",
    "PermissionDenied",
    "Principal",
    "RecallHit",
    "RetryPolicy",
    "Role",
    "Run",
    "RunContext",
    "RunStatus",
    "Scope",
    "Settings",
    "SourceType",
    "StorageError",
    "StorageUnavailable",
    "SummarizerFailed",
    "SystemClock",
    "Tether",
    "TetherError",
    "TurnRole",
    "VerifyReport",
    "Workflow",
    "WorkflowChanged",
    "WorkflowRegistry",
    "__version__",
    "load_settings",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
