"""Memory governance over HTTP: the tenant's write policy and read-access table, consent,
legal holds on scopes, invalidating a changed source, the retention cycle and
re-embedding.

Each endpoint calls one operation of ``app.memory`` with the caller's principal. These
routes are mounted before ``/memory/{memory_id}`` so that ``/memory/policy`` is not read
as a memory id.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.memory.models import Scope
from tether.memory.policy import PolicyConfig
from tether.server.api_retention import HoldPlaced
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS

router = APIRouter(tags=["memory"], responses=COMMON_ERRORS)

Purpose = Annotated[
    str, Query(min_length=1, max_length=200, description="What the consent covers.")
]


class Consent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    purpose: str = Field("preferences", min_length=1, max_length=200)


class NewHold(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scope: Scope
    scope_id: str = Field(min_length=1, max_length=200, description="Whose (user:u-1 → u-1).")
    reason: str = Field(min_length=1, max_length=2000, description="Why (a case, a request).")


class SourceChanged(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source_ref: str = Field(min_length=1, max_length=500, description="The source (doc:policy-7).")
    new_version: str = Field(min_length=1, max_length=200, description="Its current version.")


class Invalidated(BaseModel):
    invalidated: int = Field(description="Memories derived from another version.")


class RetentionCycle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decay_after_days: int = Field(180, ge=1, le=36_500, description="Unused this long: decays.")


class Reembed(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch: int = Field(256, ge=1, le=10_000, description="Memories embedded per batch.")


class Reembedded(BaseModel):
    reembedded: int


@router.get("/memory/policy", summary="The memory policy", response_model=PolicyConfig)
def policy(app: TetherApp, caller: Caller) -> PolicyConfig:
    """The tenant's write-policy settings (confidence threshold, PII action, write budget
    per run, retention per kind, disabled rules) and its `read_access` table: per role,
    the scopes and the highest sensitivity it reads. Needs `memory.read`."""
    return app.memory.policy(caller)


@router.put("/memory/policy", summary="Configure the memory policy", response_model=PolicyConfig)
def configure(body: PolicyConfig, app: TetherApp, caller: Caller) -> PolicyConfig:
    """Replace the tenant's write-policy settings and `read_access` table (a role left
    out of the table keeps its default row); audited as `memory.policy_changed`. Needs
    `memory.configure` (admin)."""
    app.memory.configure(caller, body)
    return body


@router.post("/memory/consent", summary="Give consent", status_code=204)
def grant_consent(body: Consent, app: TetherApp, caller: Caller) -> None:
    """The caller (a user) consents to having their preferences remembered for `purpose`;
    without it, preferences in their user scope are refused. Needs `memory.consent`
    (every role)."""
    app.memory.grant_consent(caller, purpose=body.purpose)


@router.delete("/memory/consent", summary="Withdraw consent", status_code=204)
def revoke_consent(app: TetherApp, caller: Caller, purpose: Purpose = "preferences") -> None:
    """The caller withdraws their consent for `purpose`. Needs `memory.consent`."""
    app.memory.revoke_consent(caller, purpose=purpose)


@router.post("/memory/holds", summary="Place a legal hold on memory", status_code=201)
def place_hold(body: NewHold, app: TetherApp, caller: Caller) -> HoldPlaced:
    """A legal hold on a scope: nothing in it expires, decays, is purged or erased while
    the hold stands. Needs `memory.configure` (admin)."""
    return HoldPlaced(hold_id=app.memory.place_hold(caller, body.scope, body.scope_id, body.reason))


@router.post(
    "/memory/sources/invalidate", summary="Invalidate a changed source", response_model=Invalidated
)
def invalidate_source(body: SourceChanged, app: TetherApp, caller: Caller) -> Invalidated:
    """A source changed: every active memory derived from another version of it is
    invalidated (kept in its history, no longer recalled). Needs `memory.forget` and the
    right to change memory in each affected scope."""
    count = app.memory.invalidate_source(caller, body.source_ref, body.new_version)
    return Invalidated(invalidated=count)


@router.post("/memory/retention", summary="Run the memory retention cycle")
def retention_cycle(body: RetentionCycle, app: TetherApp, caller: Caller) -> dict[str, int]:
    """Expire, decay and purge the tenant's memories as the policy says (nothing in a
    scope under legal hold); counts per outcome. Needs `memory.maintain` (operator,
    admin)."""
    return app.memory.retention_cycle(caller, decay_after_days=body.decay_after_days)


@router.post("/memory/reembed", summary="Re-embed memories", response_model=Reembedded)
def reembed(body: Reembed, app: TetherApp, caller: Caller) -> Reembedded:
    """Compute vectors with the current embedder for every live memory of the tenant, in
    batches; without an embedder installed this is 422. Needs `memory.maintain`."""
    return Reembedded(reembedded=app.memory.reembed(caller, batch=body.batch))
