"""``/docs``: the API reference as one page rendered by the server from the OpenAPI document.

FastAPI's own ``/docs`` and ``/redoc`` pages load Swagger UI and ReDoc from a CDN, so a
reader's browser would fetch code from another host each time. This page asks for nothing
but the console's stylesheet: every operation by tag (method, path, summary, description,
parameters, body, answers) and every schema (fields, types, enums), each type linked to its
schema. It is rendered with the console's escaping templates and carries the console's
security headers. ``/redoc`` leads here; ``/openapi.json`` stays the machine-readable form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from tether.server.console.render import SECURITY_HEADERS, make_environment, render
from tether.server.console.site import CONSOLE_PATH

METHODS = ("get", "post", "put", "patch", "delete")
_REF = "#/components/schemas/"

Token = tuple[str, str | None]
"""A piece of a type as shown: its text, and the schema it links to (or ``None``)."""


@dataclass(frozen=True)
class Field:
    name: str
    type: list[Token]
    required: bool
    description: str
    where: str = ""
    """For a parameter: path, query or header."""
    default: str = ""
    """For a parameter: its value when not given, as JSON (empty: none)."""


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    anchor: str
    summary: str
    description: str
    needs_key: bool
    parameters: list[Field]
    body: list[Token] | None
    answers: list[tuple[str, str, list[Token]]]
    """Status, description and type of each answer."""


@dataclass(frozen=True)
class Section:
    name: str
    description: str
    operations: list[Operation]


@dataclass(frozen=True)
class Schema:
    name: str
    description: str
    type: list[Token]
    fields: list[Field]
    values: list[str]
    """An enumeration's values."""


def type_of(schema: dict[str, Any]) -> list[Token]:
    """A JSON schema as a short type: ``Run``, ``array of Wait``, ``string (date-time) |
    null``; references become links to their schema."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(_REF)
        return [(name, name)]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            tokens: list[Token] = []
            for number, part in enumerate(schema[key]):
                tokens += ([(" | ", None)] if number else []) + type_of(part)
            return tokens
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return type_of(schema["allOf"][0])
    kind = schema.get("type")
    if kind == "array":
        return [("array of ", None), *type_of(schema.get("items", {}))]
    if "enum" in schema:
        return [(f"{kind or 'value'}: " + ", ".join(map(str, schema["enum"])), None)]
    if "const" in schema:
        return [(repr(schema["const"]), None)]
    if isinstance(kind, list):
        return [(" | ".join(kind), None)]
    if kind is None:
        return [("any", None)]
    return [(f"{kind} ({schema['format']})" if "format" in schema else str(kind), None)]


def _body_type(content: dict[str, Any]) -> list[Token]:
    for media, value in content.items():
        return [*type_of(value.get("schema", {})), (f" ({media})", None)]
    return []


def operation_of(path: str, method: str, spec: dict[str, Any]) -> Operation:
    parameters = [
        Field(
            name=param["name"],
            type=type_of(param.get("schema", {})),
            required=param.get("required", False),
            description=param.get("description", ""),
            where=param.get("in", ""),
            default=json.dumps(param["schema"]["default"])
            if "default" in param.get("schema", {})
            else "",
        )
        for param in spec.get("parameters", [])
    ]
    body = spec.get("requestBody")
    return Operation(
        method=method.upper(),
        path=path,
        anchor=spec.get("operationId", f"{method}-{path}"),
        summary=spec.get("summary", ""),
        description=spec.get("description", ""),
        needs_key=bool(spec.get("security")),
        parameters=parameters,
        body=_body_type(body.get("content", {})) if body else None,
        answers=[
            (status, answer.get("description", ""), _body_type(answer.get("content", {})))
            for status, answer in spec.get("responses", {}).items()
        ],
    )


def sections_of(document: dict[str, Any]) -> list[Section]:
    """The operations grouped by their first tag, in the order the document names tags."""
    tags = {tag["name"]: tag.get("description", "") for tag in document.get("tags", [])}
    grouped: dict[str, list[Operation]] = {name: [] for name in tags}
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                tag = (item[method].get("tags") or ["other"])[0]
                grouped.setdefault(tag, []).append(operation_of(path, method, item[method]))
    return [
        Section(name, tags.get(name, ""), operations)
        for name, operations in grouped.items()
        if operations
    ]


def schemas_of(document: dict[str, Any]) -> list[Schema]:
    found = []
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        required = set(schema.get("required", []))
        fields = [
            Field(
                name=field,
                type=type_of(value),
                required=field in required,
                description=value.get("description", ""),
            )
            for field, value in schema.get("properties", {}).items()
        ]
        found.append(
            Schema(
                name=name,
                description=schema.get("description", ""),
                type=[] if fields or "enum" in schema else type_of(schema),
                fields=fields,
                values=[str(value) for value in schema.get("enum", [])],
            )
        )
    return found


def add_reference(api: FastAPI) -> None:
    """Serve the reference at ``/docs`` (and send ``/redoc`` there) on ``api``, which must
    be made with ``docs_url=None`` and ``redoc_url=None``."""
    templates = make_environment()
    headers = {name.decode(): value.decode() for name, value in SECURITY_HEADERS}

    @api.get("/docs", include_in_schema=False, response_class=HTMLResponse)
    def reference(request: Request) -> HTMLResponse:
        document = api.openapi()
        return render(
            templates,
            request,
            "reference.html",
            {
                "info": document.get("info", {}),
                "sections": sections_of(document),
                "schemas": schemas_of(document),
                "schemes": document.get("components", {}).get("securitySchemes", {}),
                "openapi_url": api.openapi_url or "",
                "static": f"{request.scope.get('root_path', '')}{CONSOLE_PATH}/static",
            },
            headers=headers,
        )

    @api.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/docs", status_code=308)
