"""The audit trail: append-only, hash-chained per tenant.

Public names load their submodule on first use (see :mod:`tether._exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.audit.chain import ChainProblem, VerifyReport, verify_chain
    from tether.audit.log import AuditEntry, AuditLog

_EXPORTS = {
    "AuditEntry": "tether.audit.log",
    "AuditLog": "tether.audit.log",
    "ChainProblem": "tether.audit.chain",
    "VerifyReport": "tether.audit.chain",
    "verify_chain": "tether.audit.chain",
}

__all__ = ["AuditEntry", "AuditLog", "ChainProblem", "VerifyReport", "verify_chain"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
