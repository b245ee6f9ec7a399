"""``/api/v1/procedures``: the skills and policies published for the tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.errors import NotFound
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS

router = APIRouter(tags=["procedures"], responses=COMMON_ERRORS)


class ProceduresInForce(BaseModel):
    version: str
    since: datetime
    by: str
    source: str
    skills: list[str]
    policies: list[str]
    documents: list[dict[str, Any]]


class ProcedureVersion(BaseModel):
    version: str
    source: str
    published_at: datetime
    published_by: str


class Publish(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[dict[str, Any]] = Field(
        max_length=1000, description="Skill and policy documents (as in the YAML files)."
    )
    allow_empty: bool = Field(False, description="Publish an empty set (removes every policy).")


class Published(BaseModel):
    version: str
    previous: str | None
    changed: bool


@router.get("/procedures", summary="Procedures in force", response_model=ProceduresInForce)
def current(app: TetherApp, caller: Caller) -> ProceduresInForce:
    """The version of skills and policies in force for the tenant: who published it,
    when, and its documents. 404 if nothing was published. Needs `procedures.read`."""
    found = app.procedures.current(caller)
    if found is None:
        raise NotFound("no procedures are published for this tenant; see `tether procedures`")
    return ProceduresInForce(
        version=found.procedures.version,
        since=found.since,
        by=found.by,
        source=found.source,
        skills=[skill.name for skill in found.procedures.skills],
        policies=[policy.name for policy in found.procedures.policies],
        documents=found.procedures.documents,
    )


@router.get(
    "/procedures/history", summary="Published versions", response_model=list[ProcedureVersion]
)
def history(
    app: TetherApp,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=1000, description="Most versions to list.")] = 20,
) -> list[ProcedureVersion]:
    """Published versions, newest first, each naming who published it. Needs
    `procedures.read`."""
    return [
        ProcedureVersion(
            version=row.version,
            source=row.source,
            published_at=row.published_at,
            published_by=row.published_by,
        )
        for row in app.procedures.history(caller, limit=limit)
    ]


@router.get("/procedures/rendered", summary="Procedures for a prompt", response_model=list[str])
def rendered(
    app: TetherApp,
    caller: Caller,
    label: Annotated[
        list[str] | None,
        Query(
            max_length=50, description="Only the skills for these task labels (and all-task ones)."
        ),
    ] = None,
) -> list[str]:
    """The text blocks a prompt carries: each skill in force (those for `label` if given,
    plus those for every task), then one summary of the policies. Needs
    `procedures.read`."""
    return app.procedures.render_for_context(caller, labels=label or ())


@router.post("/procedures", summary="Publish procedures", response_model=Published)
def publish(body: Publish, app: TetherApp, caller: Caller) -> Published:
    """Validate the documents and make them the version in force (publishing what is in
    force already changes nothing). Needs `procedures.publish` (admin)."""
    done = app.procedures.publish(caller, body.documents, allow_empty=body.allow_empty)
    return Published(version=done.version, previous=done.previous, changed=done.changed)
