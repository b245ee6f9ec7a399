"""One permission map: what each role may do, and what each operation needs.

Every surface (the Python API, the CLI, the HTTP API and the MCP server) asks
this module, so a role means the same everywhere:

- :data:`ROLE_PERMISSIONS`: the permissions each role holds (``admin`` holds every tenant
  permission);
- :data:`OPERATIONS`: every public service operation (``"runs.start"``) and the
  permission it needs (every CLI command and the operation it calls:
  :mod:`tether.permissions_cli`);
- :func:`authorize`: the one check the services make before they act.

A principal acts only inside its own tenant: every operation reads and writes
``principal.tenant_id`` and nothing else. The reserved tenant ``_global`` is the platform's:
its admins are the platform administrators, who alone write global memory; they are
created only by Tether's setup (``tether platform add-admin``), never by a tenant admin.

Answers to a run's waits depend on the wait (:func:`check_wait_answer`): a clarification
is answered by its addressee or an operator; a ``human_review`` or "did this effect
happen?" review only by an operator or approver who is not an agent and did not start the
run. ``docs/permissions.md`` shows the map as tables (:mod:`tether.permissions_doc`; a test
keeps it in step).
"""

from __future__ import annotations

import enum
from types import MappingProxyType

from tether.errors import PermissionDenied
from tether.principals import GLOBAL_TENANT, RESERVED_PREFIX, Principal, Role


class Permission(enum.StrEnum):
    RUNS_READ = "runs.read"
    RUNS_START = "runs.start"
    RUNS_ANSWER = "runs.answer"
    """Answer a wait addressed to the principal, or an external dependency."""
    RUNS_ANSWER_ANY = "runs.answer_any"
    """Answer a clarification addressed to someone else."""
    RUNS_REVIEW = "runs.review"
    """Answer a ``human_review`` or an effect-outcome review (never an agent or the run's
    starter)."""
    RUNS_DECIDE = "runs.decide"
    """Decide an approval request (with the role the request names)."""
    RUNS_CONTROL = "runs.control"
    """The runbook: pause, resume, cancel, retry, skip, complete and fork runs."""
    RUNS_SEND = "runs.send"
    """Send new input to a run's inbox."""
    RUNS_LIMITS = "runs.limits"
    """Set the tenant's concurrency limit."""
    RUNS_RETENTION = "runs.retention"
    """Set run retention policies and place or release legal holds on runs."""
    HOUSEKEEPING = "housekeeping"
    """Run the tenant's retention pass and compact old runs (``gc``) now."""
    WEBHOOKS_READ = "webhooks.read"
    WEBHOOKS_OPERATE = "webhooks.operate"
    """Add and remove endpoints, retry deliveries, queue a notification."""
    WEBHOOKS_MANAGE = "webhooks.manage"
    """The URL allowlist and the signing secret."""
    MEMORY_READ = "memory.read"
    MEMORY_PROPOSE = "memory.propose"
    MEMORY_FEEDBACK = "memory.feedback"
    MEMORY_FORGET = "memory.forget"
    MEMORY_CORRECT = "memory.correct"
    MEMORY_APPROVE = "memory.approve"
    MEMORY_CONSENT = "memory.consent"
    MEMORY_CONFIGURE = "memory.configure"
    MEMORY_MAINTAIN = "memory.maintain"
    THREADS_READ = "threads.read"
    THREADS_WRITE = "threads.write"
    THREADS_MAINTAIN = "threads.maintain"
    WORKING_READ = "working.read"
    WORKING_WRITE = "working.write"
    PROCEDURES_READ = "procedures.read"
    PROCEDURES_PUBLISH = "procedures.publish"
    AUDIT_READ = "audit.read"
    PRINCIPALS_READ = "principals.read"
    PRINCIPALS_MANAGE = "principals.manage"
    API_KEYS_MANAGE = "api_keys.manage"
    """Make, list and revoke the tenant's API keys (each acts as one of its principals)."""
    SUBJECTS_EXPORT = "subjects.export"
    SUBJECTS_ERASE = "subjects.erase"
    GLOBAL_MEMORY_WRITE = "global_memory.write"
    """Propose and approve global memory: platform administrators only."""
    PLATFORM_RUNS = "platform.runs"
    """List every tenant and the run rows of any tenant (status, workflow, node, error;
    never a run's state, events or approvals): platform administrators only."""
    MAINTENANCE = "maintenance"
    """Done as the system by whoever holds the database and its key (migrations, workers,
    creating tenants, verifying every trail); no principal holds it."""
    FILES = "files"
    """Reads local files only, no tenant data; needs no principal."""


NO_PRINCIPAL = frozenset({Permission.MAINTENANCE, Permission.FILES})
"""Permissions of operations that take no principal."""

_READ = frozenset(
    {
        Permission.RUNS_READ,
        Permission.MEMORY_READ,
        Permission.MEMORY_CONSENT,
        Permission.THREADS_READ,
        Permission.WORKING_READ,
        Permission.PROCEDURES_READ,
        Permission.WEBHOOKS_READ,
    }
)
_WORK = frozenset(
    {
        Permission.RUNS_START,
        Permission.RUNS_ANSWER,
        Permission.RUNS_SEND,
        Permission.MEMORY_PROPOSE,
        Permission.MEMORY_FEEDBACK,
        Permission.MEMORY_FORGET,
        Permission.THREADS_WRITE,
        Permission.WORKING_WRITE,
    }
)
_REVIEW = frozenset(
    {
        Permission.RUNS_ANSWER,
        Permission.RUNS_REVIEW,
        Permission.RUNS_DECIDE,
        Permission.MEMORY_PROPOSE,
        Permission.MEMORY_FEEDBACK,
        Permission.MEMORY_CORRECT,
        Permission.MEMORY_APPROVE,
        Permission.AUDIT_READ,
    }
)
_OPERATE = frozenset(
    {
        Permission.RUNS_ANSWER_ANY,
        Permission.RUNS_REVIEW,
        Permission.RUNS_CONTROL,
        Permission.HOUSEKEEPING,
        Permission.WEBHOOKS_OPERATE,
        Permission.MEMORY_CORRECT,
        Permission.MEMORY_APPROVE,
        Permission.MEMORY_MAINTAIN,
        Permission.THREADS_MAINTAIN,
        Permission.SUBJECTS_EXPORT,
        Permission.AUDIT_READ,
        Permission.PRINCIPALS_READ,
    }
)
PLATFORM_ONLY = frozenset({Permission.GLOBAL_MEMORY_WRITE, Permission.PLATFORM_RUNS})
"""Permissions only platform administrators hold."""
TENANT_PERMISSIONS = frozenset(Permission) - NO_PRINCIPAL - PLATFORM_ONLY
"""Everything a tenant's admin may do: every permission but the platform's."""

ROLE_PERMISSIONS: MappingProxyType[Role, frozenset[Permission]] = MappingProxyType(
    {
        Role.VIEWER: _READ,
        Role.AGENT: _READ | _WORK,
        Role.APPROVER: _READ | _REVIEW,
        Role.OPERATOR: _READ | _WORK | _OPERATE,
        Role.ADMIN: TENANT_PERMISSIONS,
    }
)
"""The permissions each role holds in an ordinary tenant."""

PLATFORM_PERMISSIONS: MappingProxyType[Role, frozenset[Permission]] = MappingProxyType(
    {
        Role.ADMIN: frozenset(
            {
                Permission.GLOBAL_MEMORY_WRITE,
                Permission.PLATFORM_RUNS,
                Permission.MEMORY_READ,
                Permission.MEMORY_PROPOSE,
                Permission.MEMORY_APPROVE,
                Permission.MEMORY_FORGET,
                Permission.MEMORY_CORRECT,
                Permission.MEMORY_FEEDBACK,
                Permission.MEMORY_MAINTAIN,
                Permission.MEMORY_CONFIGURE,
                Permission.SUBJECTS_EXPORT,
                Permission.SUBJECTS_ERASE,
                Permission.AUDIT_READ,
                Permission.PRINCIPALS_READ,
                Permission.API_KEYS_MANAGE,
            }
        ),
    }
)
"""What a principal of the platform tenant (``_global``) holds: global memory and its
own trail, nothing in any ordinary tenant. Only ``admin`` is granted there."""

_P = Permission
OPERATIONS: MappingProxyType[str, Permission] = MappingProxyType(
    {
        # app.runs
        "runs.start": _P.RUNS_START,
        "runs.get": _P.RUNS_READ,
        "runs.all": _P.RUNS_READ,
        "runs.page": _P.RUNS_READ,
        "runs.events": _P.RUNS_READ,
        "runs.checkpoints": _P.RUNS_READ,
        "runs.journal": _P.RUNS_READ,
        "runs.state": _P.RUNS_READ,
        "runs.waits": _P.RUNS_READ,
        "runs.wait": _P.RUNS_READ,
        "runs.handoff": _P.RUNS_READ,
        "runs.handoff_document": _P.RUNS_READ,
        "runs.answer": _P.RUNS_ANSWER,
        "runs.decide": _P.RUNS_DECIDE,
        "runs.expire_waits": _P.MAINTENANCE,
        "runs.settle_children": _P.MAINTENANCE,
        "runs.stuck": _P.RUNS_READ,
        "runs.stuck_in": _P.MAINTENANCE,
        "runs.set_concurrency_limit": _P.RUNS_LIMITS,
        "runs.concurrency_limit": _P.RUNS_READ,
        # app.platform (platform administrators)
        "platform.tenants": _P.PLATFORM_RUNS,
        "platform.runs": _P.PLATFORM_RUNS,
        # app.runbook (an operator's actions on a run; reasons kept as notes)
        "runbook.inspect": _P.RUNS_READ,
        "runbook.plan_fork": _P.RUNS_READ,
        "runbook.pause": _P.RUNS_CONTROL,
        "runbook.resume": _P.RUNS_CONTROL,
        "runbook.cancel": _P.RUNS_CONTROL,
        "runbook.retry": _P.RUNS_CONTROL,
        "runbook.retry_node": _P.RUNS_CONTROL,
        "runbook.skip": _P.RUNS_CONTROL,
        "runbook.complete": _P.RUNS_CONTROL,
        "runbook.fork": _P.RUNS_CONTROL,
        # app.inbox, app.retention, app.housekeeping
        "inbox.send": _P.RUNS_SEND,
        "inbox.messages": _P.RUNS_READ,
        "retention.set_policy": _P.RUNS_RETENTION,
        "retention.remove_policy": _P.RUNS_RETENTION,
        "retention.policies": _P.RUNS_READ,
        "retention.hold": _P.RUNS_RETENTION,
        "retention.release": _P.RUNS_RETENTION,
        "retention.holds": _P.RUNS_READ,
        "retention.gc": _P.HOUSEKEEPING,
        "housekeeping.run": _P.HOUSEKEEPING,
        "housekeeping.run_due": _P.MAINTENANCE,
        # app.webhooks, app.dispatcher
        "webhooks.signing_secret": _P.WEBHOOKS_MANAGE,
        "webhooks.allow": _P.WEBHOOKS_MANAGE,
        "webhooks.disallow": _P.WEBHOOKS_MANAGE,
        "webhooks.allowlist": _P.WEBHOOKS_READ,
        "webhooks.add_endpoint": _P.WEBHOOKS_OPERATE,
        "webhooks.remove_endpoint": _P.WEBHOOKS_OPERATE,
        "webhooks.endpoints": _P.WEBHOOKS_READ,
        "webhooks.deliveries": _P.WEBHOOKS_READ,
        "webhooks.retry": _P.WEBHOOKS_OPERATE,
        "webhooks.notify": _P.WEBHOOKS_OPERATE,
        "webhooks.scan": _P.MAINTENANCE,
        "webhooks.notify_stuck": _P.MAINTENANCE,
        "dispatcher.scan_stuck": _P.MAINTENANCE,
        "webhooks.secret_for": _P.MAINTENANCE,
        "dispatcher.run_due": _P.MAINTENANCE,
        "dispatcher.send_due": _P.MAINTENANCE,
        # app.graphs (LangGraph threads checkpointed by Tether)
        "graphs.write": _P.RUNS_START,
        "graphs.writer": _P.RUNS_START,
        "graphs.copy_thread": _P.RUNS_START,
        "graphs.checkpoint": _P.RUNS_READ,
        "graphs.checkpoints": _P.RUNS_READ,
        "graphs.thread_run": _P.RUNS_READ,
        "graphs.resume_values": _P.RUNS_READ,
        "graphs.timeline": _P.RUNS_READ,
        "graphs.delete_thread": _P.RUNS_CONTROL,
        "graphs.delete_for_runs": _P.RUNS_CONTROL,
        "graphs.prune": _P.RUNS_CONTROL,
        # app.memory
        "memory.policy": _P.MEMORY_READ,
        "memory.configure": _P.MEMORY_CONFIGURE,
        "memory.grant_consent": _P.MEMORY_CONSENT,
        "memory.revoke_consent": _P.MEMORY_CONSENT,
        "memory.propose": _P.MEMORY_PROPOSE,
        "memory.propose_many": _P.MEMORY_PROPOSE,
        "memory.approve": _P.MEMORY_APPROVE,
        "memory.pending": _P.MEMORY_APPROVE,
        "memory.reject": _P.MEMORY_APPROVE,
        "memory.correct": _P.MEMORY_CORRECT,
        "memory.confirm": _P.MEMORY_FEEDBACK,
        "memory.contradict": _P.MEMORY_FEEDBACK,
        "memory.forget": _P.MEMORY_FORGET,
        "memory.invalidate_source": _P.MEMORY_FORGET,
        "memory.place_hold": _P.MEMORY_CONFIGURE,
        "memory.retention_cycle": _P.MEMORY_MAINTAIN,
        "memory.reembed": _P.MEMORY_MAINTAIN,
        "memory.get": _P.MEMORY_READ,
        "memory.history": _P.MEMORY_READ,
        "memory.in_scopes": _P.MEMORY_READ,
        "memory.recall": _P.MEMORY_READ,
        "memory.recalls": _P.AUDIT_READ,
        "memory.flush_access": _P.MAINTENANCE,
        # app.graph_store (LangGraph's key-value store on governed memory)
        "graph_store.put": _P.MEMORY_PROPOSE,
        "graph_store.opt_out": _P.MEMORY_PROPOSE,
        "graph_store.get": _P.MEMORY_READ,
        "graph_store.search": _P.MEMORY_READ,
        "graph_store.namespaces": _P.MEMORY_READ,
        "graph_store.delete": _P.MEMORY_FORGET,
        "graph_store.sweep": _P.MEMORY_FORGET,
        # app.threads
        "threads.create": _P.THREADS_WRITE,
        "threads.get": _P.THREADS_READ,
        "threads.all": _P.THREADS_READ,
        "threads.append": _P.THREADS_WRITE,
        "threads.append_many": _P.THREADS_WRITE,
        "threads.turns": _P.THREADS_READ,
        "threads.last_turns": _P.THREADS_READ,
        "threads.tail": _P.THREADS_READ,
        "threads.get_turn": _P.THREADS_READ,
        "threads.find_turns": _P.THREADS_READ,
        "threads.summaries": _P.THREADS_READ,
        "threads.summarize": _P.THREADS_WRITE,
        "threads.retention_cycle": _P.THREADS_MAINTAIN,
        "threads.export_user": _P.SUBJECTS_EXPORT,
        "threads.erase_user": _P.SUBJECTS_ERASE,
        # app.working
        "working.set": _P.WORKING_WRITE,
        "working.get": _P.WORKING_READ,
        "working.entry": _P.WORKING_READ,
        "working.get_many": _P.WORKING_READ,
        "working.items": _P.WORKING_READ,
        "working.entries": _P.WORKING_READ,
        "working.keys": _P.WORKING_READ,
        "working.touch": _P.WORKING_WRITE,
        "working.delete": _P.WORKING_WRITE,
        "working.clear": _P.WORKING_WRITE,
        "working.export_sessions": _P.SUBJECTS_EXPORT,
        "working.erase_sessions": _P.SUBJECTS_ERASE,
        "working.purge_expired": _P.MAINTENANCE,
        "working.close": _P.MAINTENANCE,
        # app.procedures
        "procedures.load_dir": _P.FILES,
        "procedures.check": _P.FILES,
        "procedures.check_directory": _P.FILES,
        "procedures.publish": _P.PROCEDURES_PUBLISH,
        "procedures.publish_set": _P.MAINTENANCE,
        "procedures.current": _P.PROCEDURES_READ,
        "procedures.history": _P.PROCEDURES_READ,
        "procedures.render_for_context": _P.PROCEDURES_READ,
        "procedures.in_force_txn": _P.MAINTENANCE,
        "procedures.version_txn": _P.MAINTENANCE,
        "procedures.gate": _P.MAINTENANCE,
        # app.audit
        "audit.entries": _P.AUDIT_READ,
        "audit.latest": _P.AUDIT_READ,
        "audit.verify": _P.MAINTENANCE,
        "audit.subject_hash": _P.MAINTENANCE,
        "audit.record_txn": _P.MAINTENANCE,
        "audit.record_by_txn": _P.MAINTENANCE,
        "audit.next_entry": _P.MAINTENANCE,
        "audit.seal_unkeyed_trails": _P.MAINTENANCE,
        # app.notes (operators' reasons, cited by digest)
        "notes.read": _P.AUDIT_READ,
        "notes.erase": _P.SUBJECTS_ERASE,
        "notes.digest": _P.MAINTENANCE,
        "notes.record_txn": _P.MAINTENANCE,
        # app.tenants
        "tenants.create": _P.MAINTENANCE,
        "tenants.get": _P.MAINTENANCE,
        "tenants.require": _P.MAINTENANCE,
        "tenants.all": _P.MAINTENANCE,
        "tenants.principal": _P.MAINTENANCE,
        "tenants.add_platform_admin": _P.MAINTENANCE,
        "tenants.principals": _P.PRINCIPALS_READ,
        "tenants.grant": _P.PRINCIPALS_MANAGE,
        # app.api_keys
        "api_keys.create": _P.API_KEYS_MANAGE,
        "api_keys.all": _P.API_KEYS_MANAGE,
        "api_keys.revoke": _P.API_KEYS_MANAGE,
        "api_keys.authenticate": _P.MAINTENANCE,
        # app.subjects, app.context
        "subjects.export": _P.SUBJECTS_EXPORT,
        "subjects.erase": _P.SUBJECTS_ERASE,
        "context.build": _P.THREADS_READ,
    }
)
"""Every public operation of the services on ``Tether`` (``app.<service>.<method>``) and
the permission it needs. ``maintenance`` and ``files`` operations take no principal."""


def is_platform(principal: Principal) -> bool:
    """Whether the principal belongs to the platform tenant (``_global``)."""
    return principal.tenant_id == GLOBAL_TENANT


def permissions_of(principal: Principal) -> frozenset[Permission]:
    """Every permission the principal holds in its own tenant.

    A principal of another reserved tenant holds nothing.
    """
    if is_platform(principal):
        table = PLATFORM_PERMISSIONS
    elif principal.tenant_id.startswith(RESERVED_PREFIX):
        return frozenset()
    else:
        table = ROLE_PERMISSIONS
    held: frozenset[Permission] = frozenset()
    for role in principal.roles:
        held |= table.get(role, frozenset())
    return held


def allows(principal: Principal, permission: Permission) -> bool:
    return permission in permissions_of(principal)


def authorize(principal: Principal, operation: str) -> Permission:
    """Raise :class:`PermissionDenied` unless the principal may run ``operation``.

    Returns the permission checked. ``operation`` must be in :data:`OPERATIONS`.
    """
    permission = OPERATIONS[operation]
    require(principal, permission, what=operation)
    return permission


def require(principal: Principal, permission: Permission, *, what: str = "") -> None:
    """Raise :class:`PermissionDenied` unless the principal holds ``permission``."""
    if not isinstance(principal, Principal):
        raise PermissionDenied(
            f"{what or permission.value} needs the acting principal (a Principal), "
            f"not {type(principal).__name__}"
        )
    if allows(principal, permission):
        return
    holders = sorted(role.value for role, held in ROLE_PERMISSIONS.items() if permission in held)
    if permission in PLATFORM_ONLY:
        hint = "only a platform administrator (created with `tether platform add-admin`) may"
    elif holders:
        hint = f"it needs one of the roles {', '.join(holders)}; an admin can grant one with "
        hint += "`tether principals add`"
    else:
        hint = "no principal holds it: it is done by Tether's setup"
    raise PermissionDenied(
        f"principal {principal.principal_id!r} in tenant {principal.tenant_id!r} may not "
        f"{what or permission.value} ({permission.value}): {hint}"
    )


REVIEW_REASONS = frozenset({"human_review"})
"""Wait reasons that are reviews: a person checks what the run may not decide itself."""


def check_wait_answer(
    principal: Principal,
    *,
    reason: str,
    started_by: str,
    addressee: str | None,
    settles_effect: bool,
) -> None:
    """Raise :class:`PermissionDenied` unless the principal may answer this wait.

    Args:
        reason: the wait's interrupt reason.
        started_by: the principal that started the run.
        addressee: who a clarification is addressed to (its starter unless the node named
            one).
        settles_effect: the wait asks whether an effect happened.
    """
    who = f"principal {principal.principal_id!r}"
    if reason in REVIEW_REASONS or settles_effect:
        require(principal, Permission.RUNS_REVIEW, what="answer a review")
        if Role.AGENT in principal.roles:
            raise PermissionDenied(
                f"{who} has the agent role: a review is answered by an operator or approver "
                "who is not an agent"
            )
        if principal.principal_id == started_by:
            raise PermissionDenied(
                f"{who} started this run and may not review it; another operator or approver must"
            )
        return
    if reason == "clarification_required" and principal.principal_id != addressee:
        require(principal, Permission.RUNS_ANSWER_ANY, what="answer another's clarification")
        return
    require(principal, Permission.RUNS_ANSWER, what="answer a wait")


def memory_write_access(principal: Principal, scope: str) -> tuple[str, str] | None:
    """Whether the principal writes memory in ``scope`` outright.

    Returns ``None`` when it does, else ``("held", reason)`` (a person must approve) or
    ``("refused", reason)``. The write policy's ``scope_permission`` rule answers with
    this, and changing a memory (forgetting, invalidating, contradicting, approving) needs
    the same answer as writing it.
    """
    if not allows(principal, Permission.MEMORY_PROPOSE):
        return "refused", f"{principal.principal_id} may not write memory"
    if scope == "global":
        if allows(principal, Permission.GLOBAL_MEMORY_WRITE):
            return "held", "global memory is written only with a platform administrator's approval"
        return "refused", "only a platform administrator writes global memory"
    if is_platform(principal):
        return "refused", "a platform administrator writes only global memory"
    if (
        scope == "tenant"
        and Role.AGENT in principal.roles
        and not principal.has_role(Role.OPERATOR)
    ):
        return "held", "an agent writes tenant memory only with approval"
    return None


def check_memory_change(principal: Principal, scope: str, *, what: str) -> None:
    """Raise :class:`PermissionDenied` unless the principal may ``what`` (forget, approve,
    …) a memory in ``scope``: it needs what writing there needs. In global memory that is
    a platform administrator (whose own writes are held only so a second one checks
    them)."""
    if scope == "global" and allows(principal, Permission.GLOBAL_MEMORY_WRITE):
        return
    access = memory_write_access(principal, scope)
    if access is None:
        return
    verdict, reason = access
    needs = "approval" if verdict == "held" else "a role that may write it"
    raise PermissionDenied(
        f"principal {principal.principal_id!r} may not {what} a {scope} memory: writing one "
        f"would be {verdict} ({reason}), so changing one needs {needs}"
    )
