"""Governed memory: the model proposes, a policy decides (``app.memory``).

Every memory is scoped, carries provenance, confidence and an expiry, and can be
corrected, forgotten, exported and erased; recall is lexical, and hybrid with an embedder.
Public names load their submodule on first use (see :mod:`tether._exports`), so importing
a model never loads the embedder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.memory.access import ReadAccess
    from tether.memory.embeddings import Embedder
    from tether.memory.models import (
        MemoryKind,
        MemoryProposal,
        MemoryRecord,
        MemoryStatus,
        PolicyDecision,
        Scope,
        Sensitivity,
        SourceType,
        Verdict,
    )
    from tether.memory.policy import PolicyConfig
    from tether.memory.recall import RecallHit, RecallResult, format_for_prompt
    from tether.memory.service import Memory

_EXPORTS = {
    "Memory": "tether.memory.service",
    "MemoryKind": "tether.memory.models",
    "MemoryProposal": "tether.memory.models",
    "MemoryRecord": "tether.memory.models",
    "MemoryStatus": "tether.memory.models",
    "PolicyDecision": "tether.memory.models",
    "Scope": "tether.memory.models",
    "Sensitivity": "tether.memory.models",
    "SourceType": "tether.memory.models",
    "Verdict": "tether.memory.models",
    "PolicyConfig": "tether.memory.policy",
    "ReadAccess": "tether.memory.access",
    "RecallHit": "tether.memory.recall",
    "RecallResult": "tether.memory.recall",
    "format_for_prompt": "tether.memory.recall",
    "Embedder": "tether.memory.embeddings",
}

__all__ = [
    "Embedder",
    "Memory",
    "MemoryKind",
    "MemoryProposal",
    "MemoryRecord",
    "MemoryStatus",
    "PolicyConfig",
    "PolicyDecision",
    "ReadAccess",
    "RecallHit",
    "RecallResult",
    "Scope",
    "Sensitivity",
    "SourceType",
    "Verdict",
    "format_for_prompt",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
