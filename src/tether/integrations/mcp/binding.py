"""Who an MCP server acts as, and where: a principal of one tenant, or each request's.

The server is handed a :class:`Binding`, never a principal. Its :data:`PrincipalSource`
is asked for the principal at every tool call, so the roles are read from the database
each time: a role granted or revoked applies to the next call, without a restart. Three
sources name the principal:

- :func:`configured`: by configuration (``--tenant`` and ``--as``);
- :func:`by_api_key`: by one API key given at start (``--api-key``), checked again at every
  call, so a key revoked or expired while the server runs stops working at the next one;
- :func:`request_key`: by the API key that the HTTP request carrying the call presents
  (``Authorization: Bearer``), so one server serves many principals of many tenants.

An API key acts with the key's roles, at most its principal's (:mod:`tether.apikeys`).
The raw key is held only in memory: it is never logged, shown in an error, or written to
the audit trail (which names the principal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mcp.server.auth.middleware.auth_context import get_access_token

from tether.app import Tether
from tether.errors import PermissionDenied, Unauthenticated
from tether.memory.models import MemoryRecord, Scope
from tether.memory.text import parse_scope, scope_key
from tether.permissions import authorize
from tether.principals import Principal


class PrincipalSource(Protocol):
    """Gives the principal a tool call acts as, with its current roles."""

    def __call__(self, app: Tether, /) -> Principal: ...


def configured(tenant_id: str, principal_id: str) -> PrincipalSource:
    """The principal ``principal_id`` of ``tenant_id``, as configured for the server."""

    def principal(app: Tether) -> Principal:
        return app.tenants.principal(tenant_id, principal_id)

    return principal


def by_api_key(raw_key: str) -> PrincipalSource:
    """The principal of the API key ``raw_key``, with the key's roles, checked at every
    call (an unknown, revoked or expired key is ``unauthenticated``)."""

    def principal(app: Tether) -> Principal:
        return app.api_keys.authenticate(raw_key)

    return principal


def request_key(app: Tether) -> Principal:
    """The principal of the API key the current HTTP request carries.

    The key reaches the tool through the MCP SDK's bearer authentication
    (:func:`mcp.server.auth.middleware.auth_context.get_access_token`), which
    :func:`tether.integrations.mcp.server.build_server` installs for a binding with this
    source; it is checked again here, so the tool acts only on a key valid at the call.
    """
    token = get_access_token()
    if token is None:
        raise Unauthenticated(
            "this server acts as the principal of each request's API key: send "
            "`Authorization: Bearer <key>` over streamable HTTP"
        )
    return app.api_keys.authenticate(token.token)


@dataclass(frozen=True)
class Binding:
    """What the server's tools act as, and the scopes they are confined to.

    With no ``scopes``, a tool names its own and the principal's roles decide; with some,
    every tool stays inside them (a memory outside them is refused even by id) and a tool
    that names none uses them all.
    """

    principal: PrincipalSource
    scopes: tuple[tuple[Scope, str], ...] = ()

    @classmethod
    def of(cls, principal: PrincipalSource, scopes: Sequence[str] = ()) -> Binding:
        """A binding from ``kind:id`` scope strings (``user:u-1``)."""
        return cls(principal, tuple(dict.fromkeys(parse_scope(value) for value in scopes)))

    @property
    def per_request(self) -> bool:
        """Whether each HTTP request names the principal with its own API key."""
        return self.principal is request_key

    def check(self, app: Tether) -> Principal:
        """The principal, refused unless it may read memory (what every tool needs)."""
        principal = self.principal(app)
        authorize(principal, "memory.recall")
        return principal

    def scopes_for(self, given: Sequence[str] | None) -> list[tuple[Scope, str]]:
        """The scopes a tool call names, inside the binding's; the binding's when none."""
        if not given:
            return list(self.scopes)
        scopes = [parse_scope(value) for value in given]
        for scope in scopes:
            self.require_scope(*scope)
        return scopes

    def require_scope(self, scope: Scope, scope_id: str) -> None:
        if self.scopes and (scope, scope_id) not in self.scopes:
            allowed = ", ".join(scope_key(*pair) for pair in self.scopes)
            raise PermissionDenied(
                f"scope {scope_key(scope, scope_id)!r} is outside this server's scopes ({allowed})"
            )

    def require_record(self, record: MemoryRecord) -> MemoryRecord:
        """``record``, refused when it lies outside the binding's scopes."""
        self.require_scope(record.scope, record.scope_id)
        return record
