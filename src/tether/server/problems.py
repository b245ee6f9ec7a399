"""Errors as ``application/problem+json`` (RFC 9457), carrying Tether's stable codes.

Every error the API answers has the same shape: ``type`` (a URN naming the code),
``title``, ``status``, ``detail`` (the message of the :class:`~tether.errors.TetherError`,
which says what to do next) and ``code`` (the stable code scripts match on). The HTTP
status follows the error's class: 401 for a missing or refused key, 403 for a permission,
404 for what does not exist (another tenant's objects included: they do not exist for the
caller), 409 for a conflict with the current state, 413 for a body over the limit, 422 for
bad input, 503 when the database cannot be reached. Messages pass
:func:`tether.redaction.redact`; an unexpected exception is logged and answered with a
500 that names no detail of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether import errors
from tether.redaction import get_logger, redact
from tether.validation import validation_message

log = get_logger("tether.server")

PROBLEM_JSON = "application/problem+json"

STATUS_OF: tuple[tuple[type[errors.TetherError], int], ...] = (
    (errors.Unauthenticated, 401),
    (errors.PermissionDenied, 403),
    (errors.ActionNotApproved, 403),
    (errors.EffectForbidden, 403),
    (errors.NotFound, 404),
    (errors.Conflict, 409),
    (errors.WorkflowChanged, 409),
    (errors.InterruptExpired, 409),
    (errors.RequestTooLarge, 413),
    (errors.InvalidInput, 422),
    (errors.StorageUnavailable, 503),
    (errors.SchemaOutdated, 503),
    (errors.SchemaTooNew, 503),
    (errors.DatabaseMissing, 503),
    (errors.SummarizerFailed, 502),
)
"""Each error class and its HTTP status, the most specific first (others: 500)."""

_HTTP_CODES = {401: "unauthenticated", 403: "permission_denied", 404: "not_found"}
_HTTP_CODES |= {405: "method_not_allowed", 413: "request_too_large", 422: "invalid_input"}


class Problem(BaseModel):
    """An error answer (RFC 9457 problem details) with Tether's stable ``code``."""

    type: str = Field(description="urn:tether:error:<code>.")
    title: str = Field(description="The HTTP status phrase.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong and what to do next.")
    code: str = Field(description="The stable error code (see docs/http.md).")
    effects: list[str] | None = Field(
        None,
        description=(
            "On a 409 from retry-node or fork without `rerun_effects`: each effect that "
            "would run again under a new key, as `name (idempotency key): outcome` (`applied`, "
            "`failed`, `interrupted`: its call may still land, or `unknown`)."
        ),
    )


def status_of(exc: errors.TetherError) -> int:
    for cls, status in STATUS_OF:
        if isinstance(exc, cls):
            return status
    return 500


def problem_response(
    status: int,
    code: str,
    detail: str,
    headers: Mapping[str, str] | None = None,
    *,
    effects: list[str] | None = None,
) -> JSONResponse:
    body = Problem(
        type=f"urn:tether:error:{code}",
        title=HTTPStatus(status).phrase,
        status=status,
        detail=redact(detail),
        code=code,
        effects=effects,
    )
    return JSONResponse(
        body.model_dump(exclude_none=True),
        status_code=status,
        media_type=PROBLEM_JSON,
        headers=headers,
    )


def _problem_content() -> dict[str, Any]:
    return {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the problems an endpoint may answer."""
    return {
        status: {"description": HTTPStatus(status).phrase, "content": _problem_content()}
        for status in statuses
    }


COMMON_ERRORS = error_responses(401, 403, 404, 413, 422)
"""What any authenticated endpoint may answer besides its success."""


def install_problem_handlers(api: FastAPI) -> None:
    """Answer every error, expected or not, as problem+json."""

    @api.exception_handler(errors.TetherError)
    async def tether_error(request: Request, exc: errors.TetherError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            log.warning("%s %s: %s (%s)", request.method, request.url.path, exc.code, exc)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        effects = exc.effects if isinstance(exc, errors.EffectsWouldRerun) else None
        return problem_response(status, exc.code, exc.message, headers, effects=effects)

    @api.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return problem_response(422, errors.InvalidInput.code, _request_errors(exc))

    @api.exception_handler(ValidationError)
    async def invalid_value(request: Request, exc: ValidationError) -> JSONResponse:
        return problem_response(422, errors.InvalidInput.code, validation_message(exc))

    @api.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, errors.TetherError):  # raised while the body was read
            return await tether_error(request, exc.__cause__)
        if exc.status_code == 400:  # a body that is not JSON: bad input like any other
            return problem_response(422, errors.InvalidInput.code, "the body is not valid JSON")
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return problem_response(exc.status_code, code, detail, exc.headers)

    @api.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed: %s", request.method, request.url.path, type(exc).__name__)
        return problem_response(500, "unexpected", "the server failed unexpectedly; see its log")


def _request_errors(exc: RequestValidationError) -> str:
    problems = []
    for error in exc.errors()[:10]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        problems.append(f"{where or 'request'}: {error.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(problems)


class BodyLimit:
    """Refuse a request body over ``max_bytes`` with 413 before reading it whole.

    A declared ``Content-Length`` over the limit is refused at once; a streamed body is
    counted as it arrives and refused as soon as it passes the limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(scope, receive, send)
            return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise errors.RequestTooLarge(self._message())
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except errors.RequestTooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    def _message(self) -> str:
        return (
            f"the request body is over {self.max_bytes} bytes, the most this server accepts "
            "(TETHER_SERVER_MAX_BODY_BYTES); send less"
        )

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(413, errors.RequestTooLarge.code, self._message())
        await response(scope, receive, send)
