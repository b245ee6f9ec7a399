"""The audit trail: append-only, hash-chained per tenant."""

from __future__ import annotations

from tether.audit.chain import ChainProblem, VerifyReport, entry_hash, verify_chain
from tether.audit.log import AuditEntry, AuditLog

__all__ = ["AuditEntry", "AuditLog", "ChainProblem", "VerifyReport", "entry_hash", "verify_chain"]
