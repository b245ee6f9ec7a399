"""The console application: login, sessions, CSRF, error pages, and the page routers.

:func:`mount_console` mounts it at ``/console`` on the HTTP application. It is a FastAPI
application of its own (left out of the OpenAPI document) so its errors are pages, not
problem+json, and its headers (:class:`~tether.server.console.render.SecurityHeaders`)
apply to it alone. Every page reads and acts through the services with the logged-in
principal, so the permission map decides each request exactly as it decides an API call;
the pages only hide the buttons a principal could not use.
"""

from __future__ import annotations

import secrets
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import Depends, FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether import errors
from tether.app import Tether
from tether.redaction import get_logger
from tether.runs.workflow import WorkflowRegistry
from tether.server.auth import principal_for_key
from tether.server.console import approvals, audit, memory, runbook, runs, stuck
from tether.server.console.common import (
    Console,
    LoginRequired,
    Site,
    console_of,
    page_context,
    show,
)
from tether.server.console.render import (
    STATIC,
    SecurityHeaders,
    error_page,
    make_environment,
    see_other,
)
from tether.server.console.session import (
    CSRF_FIELD,
    CSRF_HEADER,
    LOGIN_COOKIE,
    LOGIN_S,
    SESSION_COOKIE,
    SESSION_S,
    Session,
    Sessions,
    tokens_match,
)
from tether.server.problems import status_of

CONSOLE_PATH = "/console"
log = get_logger("tether.server.console")
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


async def check_csrf(request: Request) -> None:
    """App-wide dependency: every request that may change something (any method but GET,
    HEAD and OPTIONS) carries the session's CSRF token (the login form: the login
    cookie's), as the ``csrf`` form field or the ``X-CSRF-Token`` header, and comes from
    this origin when the browser names one (``Origin``); else 403 and nothing runs."""
    if request.method in _SAFE_METHODS:
        return
    origin = request.headers.get("origin")
    if origin not in (None, "null") and urlsplit(origin).netloc != request.headers.get("host"):
        raise errors.PermissionDenied("this form was sent from another site; nothing was done")
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.headers.get("content-type", "").startswith(_FORMS):
        value = (await request.form()).get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    sessions = console_of(request).sessions
    expected = []
    sealed = sessions.open(request.cookies.get(SESSION_COOKIE))
    if sealed is not None:
        expected.append(sessions.csrf_token(sealed.session_id))
    login = request.cookies.get(LOGIN_COOKIE)
    if login and request.url.path.endswith("/login"):
        expected.append(sessions.login_token(login))
    if not any(tokens_match(sent, token) for token in expected):
        raise errors.PermissionDenied(
            "the form's CSRF token is missing or does not match this session: reload the "
            "page and try again; nothing was done"
        )


def _safe_next(target: str | None, root: str) -> str:
    """Where to go after login: a path of this console only (never another host)."""
    if not target or not target.startswith(f"{root}/") or "//" in target or "\\" in target:
        return f"{root}/runs"
    return target


def _login_page(
    console: Console, request: Request, *, next_path: str, status: int = 200, message: str = ""
) -> HTMLResponse:
    nonce = secrets.token_hex(16)
    response = show(
        console,
        request,
        "login.html",
        None,
        status=status,
        login_csrf=console.sessions.login_token(nonce),
        next_path=next_path,
        message=message,
    )
    response.set_cookie(
        LOGIN_COOKIE,
        nonce,
        max_age=LOGIN_S,
        path=request.scope.get("root_path", "") or "/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _add_auth_routes(site: FastAPI) -> None:
    @site.get("/", include_in_schema=False)
    def home(request: Request) -> Response:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/runs", status_code=303)

    @site.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, console: Site, next: str | None = None) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _login_page(console, request, next_path=_safe_next(next, root))

    @site.post("/login")
    def login(
        request: Request,
        console: Site,
        api_key: Annotated[str, Form(max_length=512)],
        next: Annotated[str, Form(max_length=2000)] = "",
    ) -> Response:
        root = request.scope.get("root_path", "")
        target = _safe_next(next, root)
        try:
            principal_for_key(console.app, api_key.strip())
        except errors.Unauthenticated as exc:
            return _login_page(console, request, next_path=target, status=401, message=exc.message)
        cookie, _ = console.sessions.seal(api_key.strip())
        response = see_other(request, target)
        response.set_cookie(
            SESSION_COOKIE,
            cookie,
            max_age=SESSION_S,
            path=root or "/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        response.delete_cookie(LOGIN_COOKIE, path=root or "/")
        return response

    @site.post("/logout")
    def logout(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        response = see_other(request, f"{root}/login")
        response.delete_cookie(SESSION_COOKIE, path=root or "/")
        return response


def _add_error_pages(site: FastAPI) -> None:
    def session_of(request: Request) -> Session | None:
        found: Session | None = getattr(request.state, "session", None)
        return found

    def to_login(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        target = f"{root}/login?next={quote(request.url.path)}"
        if request.headers.get("hx-request") == "true":
            response: Response = Response(status_code=200, headers={"HX-Redirect": target})
        else:
            response = RedirectResponse(target, status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=root or "/")
        return response

    @site.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired) -> Response:
        return to_login(request)

    @site.exception_handler(errors.TetherError)
    async def tether_error(request: Request, exc: errors.TetherError) -> Response:
        if isinstance(exc, errors.Unauthenticated):
            return to_login(request)
        status = status_of(exc)
        return error_page(
            console_of(request).templates,
            request,
            status,
            exc.code.replace("_", " "),
            exc.message,
            page_context(session_of(request)),
        )

    @site.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        fields = sorted({".".join(str(p) for p in e.get("loc", ())[1:]) for e in exc.errors()})
        return error_page(
            console_of(request).templates,
            request,
            422,
            "invalid input",
            f"the form is not valid: check {', '.join(fields) or 'its fields'}",
            page_context(session_of(request)),
        )

    @site.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return error_page(
            console_of(request).templates,
            request,
            exc.status_code,
            "not found" if exc.status_code == 404 else "error",
            str(exc.detail),
            page_context(session_of(request)),
        )


class UnexpectedErrors:
    """ASGI middleware: an unexpected exception becomes a 500 page (logged by type only,
    as every server error is), answered here so the connection stays usable and the
    security headers still apply."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if started:
                raise
            request = Request(scope)
            log.error("%s %s failed: %s", request.method, request.url.path, type(exc).__name__)
            response = error_page(
                console_of(request).templates,
                request,
                500,
                "unexpected error",
                "the console failed unexpectedly; see the server's log",
                page_context(getattr(request.state, "session", None)),
            )
            await response(scope, receive, send)


def create_console(app: Tether, workflows: WorkflowRegistry | None = None) -> FastAPI:
    """The console as an application of its own (see :func:`mount_console`)."""
    site = FastAPI(
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(check_csrf)],
    )
    site.state.console = Console(
        app=app,
        sessions=Sessions(app.keyring),
        templates=make_environment(),
        workflows=workflows or WorkflowRegistry(),
    )
    site.add_middleware(UnexpectedErrors)
    site.add_middleware(SecurityHeaders)
    _add_auth_routes(site)
    _add_error_pages(site)
    for module in (runs, runbook, stuck, approvals, memory, audit):
        site.include_router(module.router)
    site.mount("/static", StaticFiles(directory=STATIC), name="static")
    return site


def mount_console(api: FastAPI, app: Tether, *, workflows: WorkflowRegistry | None = None) -> None:
    """Serve the operator console at ``/console`` on ``api``."""
    api.mount(CONSOLE_PATH, create_console(app, workflows))
