"""What every console page uses: the console's objects, the logged-in session, and the
page context (who is logged in, the CSRF token, ``can(operation)``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment

from tether.app import Tether
from tether.errors import NotFound
from tether.permissions import OPERATIONS, allows
from tether.principals import Principal
from tether.runs.workflow import WorkflowRegistry
from tether.server.auth import principal_for_key
from tether.server.console.render import render
from tether.server.console.session import SESSION_COOKIE, Session, Sessions


@dataclass(frozen=True)
class Console:
    """What every console request uses: the open database, sessions, templates, and the
    workflows the server knows (their checkpoint SLAs count in stuck runs)."""

    app: Tether
    sessions: Sessions
    templates: Environment
    workflows: WorkflowRegistry


class LoginRequired(Exception):
    """No session, or one that is over: the browser goes to the login page."""


def console_of(request: Request) -> Console:
    console: Console = request.app.state.console
    return console


def current_session(request: Request) -> Session:
    """FastAPI dependency: the logged-in session, its API key checked again now."""
    console = console_of(request)
    sealed = console.sessions.open(request.cookies.get(SESSION_COOKIE))
    if sealed is None:
        raise LoginRequired
    principal = principal_for_key(console.app, sealed.api_key)
    session = Session(
        principal=principal,
        session_id=sealed.session_id,
        csrf=console.sessions.csrf_token(sealed.session_id),
        expires_at=sealed.expires_at,
    )
    request.state.session = session
    return session


LoggedIn = Annotated[Session, Depends(current_session)]
"""A route parameter of this type receives the logged-in session (else: the login page)."""
Site = Annotated[Console, Depends(console_of)]


def page_context(session: Session | None) -> dict[str, Any]:
    """What the layout needs: who is logged in, their CSRF token, and ``can(op)``."""

    def can(operation: str) -> bool:
        return session is not None and allows(session.principal, OPERATIONS[operation])

    return {"session": session, "can": can, "csrf": session.csrf if session else ""}


def show(
    console: Console,
    request: Request,
    template: str,
    session: Session | None,
    *,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    """Render a page with the layout's context."""
    return render(
        console.templates, request, template, {**page_context(session), **context}, status=status
    )


NOTE = re.compile(r"note:[0-9a-f]{64}")


def operator_notes(app: Tether, principal: Principal, texts: Iterable[str]) -> dict[str, str]:
    """The operators' notes (reasons, comments) the ``texts`` cite by digest, as the
    principal may read them (``notes.read``: those who read the audit trail; others see
    the digests). An erased note reads as such."""
    cited = sorted({digest for text in texts for digest in NOTE.findall(text)})
    if not cited or not allows(principal, OPERATIONS["notes.read"]):
        return {}
    found = {}
    for digest in cited:
        try:
            found[digest] = app.notes.read(principal, digest)
        except NotFound:
            found[digest] = "(note erased)"
    return found
