"""One error root with stable codes.

Every error Tether raises on purpose is a :class:`TetherError`. Its ``code`` is stable
(scripts and the HTTP API match on it) and its message says what to do next. The CLI maps
each class to an exit code that scripts can rely on; see ``docs/cli.md``.
"""

from __future__ import annotations

from typing import ClassVar


class TetherError(Exception):
    """Root of every error Tether raises on purpose."""

    code: ClassVar[str] = "tether_error"
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidInput(TetherError):
    """The caller passed something malformed; nothing was changed."""

    code = "invalid_input"
    exit_code = 3


class ConfigError(InvalidInput):
    """A setting (or ``TETHER_*`` variable) is malformed."""

    code = "invalid_config"


class ProcedureInvalid(InvalidInput):
    """A procedure file (skill or policy) is malformed; the message names file and field."""

    code = "procedure_invalid"


class ContextOverBudget(InvalidInput):
    """What a context must always hold (procedures, constraints) exceeds its token budget."""

    code = "context_over_budget"


class RequestTooLarge(InvalidInput):
    """A request body is larger than the server accepts (``TETHER_SERVER_MAX_BODY_BYTES``)."""

    code = "request_too_large"


class NotFound(TetherError):
    """The thing asked for does not exist (in this tenant)."""

    code = "not_found"
    exit_code = 4


class UnknownTenant(NotFound):
    """The tenant is not registered in this database."""

    code = "unknown_tenant"


class Conflict(TetherError):
    """The change collides with the current state (already exists, already decided)."""

    code = "conflict"
    exit_code = 5


class ConcurrentChange(Conflict):
    """What was read changed before the write that depended on it (a worker's step, a
    claim, another operator); nothing was written, and doing it again reads it afresh."""


class EffectsWouldRerun(Conflict):
    """A runbook action (``retry-node``, ``fork``) would run effects already done, or maybe
    done, again under new keys, and was not told it may (``rerun_effects``).

    Attributes:
        effects: ``name (idempotency key): outcome`` of each effect that would run again.
    """

    def __init__(self, message: str, effects: list[str]) -> None:
        super().__init__(message)
        self.effects = effects


class PermissionDenied(TetherError):
    """The principal lacks the role the action needs."""

    code = "permission_denied"
    exit_code = 6


class Unauthenticated(TetherError):
    """The caller did not prove who it is: no API key, or one that is unknown, revoked or
    expired (the message never says which, so it cannot be used to probe keys)."""

    code = "unauthenticated"
    exit_code = 6


class StorageError(TetherError):
    """The database failed in a way Tether did not expect."""

    code = "storage_error"
    exit_code = 7


class StorageUnavailable(StorageError):
    """The database cannot be reached (or the file cannot be opened)."""

    code = "storage_unavailable"


class DatabaseMissing(StorageError):
    """There is no database at the configured URL and this command does not create one."""

    code = "database_missing"


class SchemaOutdated(StorageError):
    """The database is at an older schema version than this Tether; run ``tether migrate``."""

    code = "schema_outdated"


class SchemaTooNew(StorageError):
    """The database was migrated by a newer Tether; this one must not touch it."""

    code = "schema_too_new"


class MemoryWriteRefused(TetherError):
    """The memory write policy refused a write (the message names the rules)."""

    code = "memory_write_refused"
    exit_code = 6


class IntegrityViolation(TetherError):
    """Stored data failed a check that only tampering or corruption can explain."""

    code = "integrity_violation"
    exit_code = 8


class WorkflowChanged(TetherError):
    """The code of a running workflow no longer matches what its journal recorded."""

    code = "workflow_changed"
    exit_code = 5


class ActionNotApproved(TetherError):
    """An approval-gated effect was asked to do something other than what was approved."""

    code = "action_not_approved"
    exit_code = 6


class InterruptExpired(TetherError):
    """A question the run asked expired before anyone answered it."""

    code = "interrupt_expired"
    exit_code = 5


class EffectForbidden(TetherError):
    """A published policy forbids the effect and no reviewer allowed it."""

    code = "effect_forbidden"
    exit_code = 6


class SummarizerFailed(TetherError):
    """The summarizer endpoint could not be reached or gave no usable summary."""

    code = "summarizer_failed"
    exit_code = 1


class RunSignal(BaseException):
    """Base of the control-flow signals of the run engine.

    They derive from ``BaseException`` so that a node's ``except Exception`` cannot
    swallow them.
    """


class RunCancelled(RunSignal):
    """Raised inside a node when its run was cancelled; the engine records the cancel."""


class LeaseLost(RunSignal):
    """Another worker owns the run now; this one must stop without writing anything."""
