"""Who calls: an API key in ``Authorization: Bearer <key>`` resolves to a principal.

:func:`principal_for_key` is the one check, shared by the HTTP API (through the
:func:`current_principal` dependency) and the operator console's login. The principal it
returns is what every service call receives, so the permission map
(:mod:`tether.permissions`) decides each request exactly as it decides a Python call.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tether.app import Tether
from tether.errors import InvalidInput, Unauthenticated
from tether.principals import Principal

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key made with `tether api-keys create`, sent as a Bearer token.",
)


def principal_for_key(app: Tether, raw_key: str) -> Principal:
    """The principal an API key acts as.

    Raises:
        Unauthenticated: the key is malformed, unknown, revoked or expired, or its
            principal is gone.
    """
    try:
        return app.api_keys.authenticate(raw_key)
    except InvalidInput:
        raise Unauthenticated("the API key is not valid") from None


def tether_of(request: Request) -> Tether:
    """The :class:`Tether` the server was made with (:func:`tether.server.app.create_app`)."""
    app: Tether = request.app.state.tether
    return app


def current_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """FastAPI dependency: the principal of the request's API key, or 401."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthenticated(
            "this endpoint needs an API key: send `Authorization: Bearer <key>` (an admin "
            "makes one with `tether api-keys create`)"
        )
    return principal_for_key(tether_of(request), credentials.credentials)


Caller = Annotated[Principal, Depends(current_principal)]
"""An endpoint parameter of this type receives the authenticated principal."""
TetherApp = Annotated[Tether, Depends(tether_of)]
"""An endpoint parameter of this type receives the server's :class:`Tether`."""
