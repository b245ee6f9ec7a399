"""Every ``tether`` command and the operation of :mod:`tether.permissions` it calls, so a
command needs exactly what its operation needs (tested by the permission-map test)."""

from __future__ import annotations

from types import MappingProxyType

from tether.permissions import OPERATIONS, Permission

CLI_COMMANDS: MappingProxyType[str, str] = MappingProxyType(
    {
        "migrate": "maintenance",
        "status": "maintenance",
        "demo": "maintenance",
        "worker": "maintenance",
        "platform add-admin": "tenants.add_platform_admin",
        "tenants create": "tenants.create",
        "tenants ls": "tenants.all",
        "principals add": "tenants.grant",
        "principals ls": "tenants.principals",
        "api-keys create": "api_keys.create",
        "api-keys ls": "api_keys.all",
        "api-keys revoke": "api_keys.revoke",
        "serve": "maintenance",
        "audit verify": "audit.verify",
        "audit ls": "audit.latest",
        "runs start": "runs.start",
        "runs ls": "runs.all",
        "runs stuck": "runs.stuck",
        "runs show": "runs.get",
        "runs timeline": "runs.events",
        "runs handoff": "runs.handoff_document",
        "runs inspect": "runbook.inspect",
        "runs checkpoints": "runs.checkpoints",
        "runs pause": "runbook.pause",
        "runs resume": "runbook.resume",
        "runs cancel": "runbook.cancel",
        "runs retry": "runbook.retry",
        "runs retry-node": "runbook.retry_node",
        "runs skip": "runbook.skip",
        "runs complete": "runbook.complete",
        "runs fork": "runbook.fork",
        "runs answer": "runs.answer",
        "runs send": "inbox.send",
        "runs inbox": "inbox.messages",
        "retention set": "retention.set_policy",
        "retention unset": "retention.remove_policy",
        "retention ls": "retention.policies",
        "retention hold": "retention.hold",
        "retention release": "retention.release",
        "gc": "retention.gc",
        "housekeeping run": "housekeeping.run",
        "webhooks allow": "webhooks.allow",
        "webhooks disallow": "webhooks.disallow",
        "webhooks secret": "webhooks.signing_secret",
        "webhooks add": "webhooks.add_endpoint",
        "webhooks rm": "webhooks.remove_endpoint",
        "webhooks endpoints": "webhooks.endpoints",
        "webhooks ls": "webhooks.deliveries",
        "webhooks retry": "webhooks.retry",
        "approvals ls": "runs.waits",
        "approvals show": "runs.wait",
        "approvals approve": "runs.decide",
        "approvals reject": "runs.decide",
        "memory propose": "memory.propose",
        "memory recall": "memory.recall",
        "memory show": "memory.get",
        "memory history": "memory.history",
        "memory correct": "memory.correct",
        "memory forget": "memory.forget",
        "memory pending": "memory.pending",
        "memory approve": "memory.approve",
        "memory reject": "memory.reject",
        "memory consent": "memory.grant_consent",
        "memory export": "subjects.export",
        "memory erase": "subjects.erase",
        "memory retention": "memory.retention_cycle",
        "memory reembed": "memory.reembed",
        "memory policy show": "memory.policy",
        "memory policy set": "memory.configure",
        "mcp": "memory.recall",
        "procedures check": "procedures.check",
        "procedures publish": "procedures.publish",
        "procedures show": "procedures.current",
        "procedures history": "procedures.history",
        "threads create": "threads.create",
        "threads ls": "threads.all",
        "threads show": "threads.get",
        "threads append": "threads.append",
        "context build": "context.build",
    }
)
"""Every CLI command and the operation it calls (``maintenance``: done as the system)."""


def command_permission(command: str) -> Permission:
    """The permission a CLI command needs."""
    operation = CLI_COMMANDS[command]
    return Permission.MAINTENANCE if operation == "maintenance" else OPERATIONS[operation]
