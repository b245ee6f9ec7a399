"""Rendering console pages: one Jinja environment that escapes everything, the headers every
answer carries, and errors as pages.

Templates are rendered with autoescaping on for every file, and no template marks stored
text ``|safe``: whatever a run, a memory or an approval request holds reaches the page as
text, never as markup. Values shown as JSON go through :func:`pretty` and are escaped like
any other text. Every answer carries a Content-Security-Policy that allows scripts,
styles, images, connections and form targets from the console's own origin only (no
inline script or style, no frame, no plugin), so even markup that slipped through could
neither run nor call out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether.redaction import redact

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; object-src 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
)


class SecurityHeaders:
    """ASGI middleware: the security headers on every console answer, and ``no-store`` on
    every page (pages show tenant data; only the static files may be cached)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith(f"{scope.get('root_path', '')}/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() not in {h for h, _ in SECURITY_HEADERS}
                ]
                headers.extend(SECURITY_HEADERS)
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def when(moment: datetime | None) -> str:
    """A time as operators read it: UTC to the second."""
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def pretty(value: Any) -> str:
    """A JSON value as indented text (escaped by the template like any text)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def compact(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def literal(value: Any, limit: int = 400) -> str:
    """A value as compact JSON (a string with its quotes), to compare before and after."""
    return compact(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str), limit)


def with_notes(value: Any, notes: Mapping[str, str]) -> Any:
    """``value`` with each operator note it cites by digest replaced by the note's text."""
    if not notes:
        return value
    if isinstance(value, str):
        for digest, text in notes.items():
            value = value.replace(digest, text)
        return value
    if isinstance(value, Mapping):
        return {key: with_notes(item, notes) for key, item in value.items()}
    if isinstance(value, list):
        return [with_notes(item, notes) for item in value]
    return value


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{seconds:.1f}s" if seconds < 10 else f"{secs}s"


def make_environment() -> Environment:
    """The console's template environment: every template autoescaped, undefined names
    an error (a typo fails a test instead of rendering blank)."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        when=when,
        pretty=pretty,
        compact=compact,
        literal=literal,
        duration=duration,
        with_notes=with_notes,
    )
    return env


def render(
    env: Environment,
    request: Request,
    template: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    page = env.get_template(template).render(
        root=request.scope.get("root_path", ""), path=request.url.path, **context
    )
    return HTMLResponse(page, status_code=status, headers=dict(headers or {}))


def error_page(
    env: Environment,
    request: Request,
    status: int,
    title: str,
    message: str,
    context: Mapping[str, Any],
) -> HTMLResponse:
    """An error as a page (the message passes the redactor, like every error Tether
    shows). After a form sent by htmx the address stays the form's page's."""
    stay = request.method != "GET" and request.headers.get("hx-request") == "true"
    return render(
        env,
        request,
        "error.html",
        {**context, "status": status, "title": title, "message": redact(message)},
        status=status,
        headers={"HX-Push-Url": "false"} if stay else None,
    )


def see_other(request: Request, target: str) -> Response:
    """Where the browser goes after a form: a 303 to ``target`` for a plain form; for
    htmx, ``HX-Location``, so it loads ``target`` and puts it in the history (a redirect
    followed inside htmx would leave the form's address there)."""
    if request.headers.get("hx-request") == "true":
        return Response(status_code=200, headers={"HX-Location": target})
    return RedirectResponse(target, status_code=303)
