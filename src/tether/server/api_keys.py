"""``/api/v1/api-keys``: the tenant's API keys (admins only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.apikeys import MAX_NAME, ApiKey, NewApiKey
from tether.principals import Role
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS, error_responses

router = APIRouter(tags=["api-keys"], responses=COMMON_ERRORS)


class NewKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    principal_id: str = Field(min_length=1, max_length=63, description="Who the key acts as.")
    roles: list[Role] | None = Field(
        None, max_length=5, description="The key's roles (default: all of the principal's)."
    )
    name: str = Field("", max_length=MAX_NAME, description="What the key is for.")
    expires_in_days: int | None = Field(None, ge=1, le=3650)


@router.post("/api-keys", summary="Make an API key", status_code=201, response_model=NewApiKey)
def create_key(body: NewKey, app: TetherApp, caller: Caller) -> NewApiKey:
    """Make a key acting as a principal of the tenant, with at most its roles. `secret`
    is the whole key, shown this once: only its hash is stored. Needs `api_keys.manage`
    (admin)."""
    roles = [role.value for role in body.roles] if body.roles is not None else None
    return app.api_keys.create(
        caller, body.principal_id, roles, name=body.name, expires_in_days=body.expires_in_days
    )


@router.get("/api-keys", summary="List API keys", response_model=list[ApiKey])
def list_keys(
    app: TetherApp,
    caller: Caller,
    include_revoked: Annotated[bool, Query(description="Also list revoked keys.")] = False,
) -> list[ApiKey]:
    """The tenant's keys, oldest first, without their secrets. Needs `api_keys.manage`."""
    return app.api_keys.all(caller, include_revoked=include_revoked)


@router.post(
    "/api-keys/{key_id}/revoke",
    summary="Revoke an API key",
    response_model=ApiKey,
    responses=error_responses(409),
)
def revoke_key(key_id: str, app: TetherApp, caller: Caller) -> ApiKey:
    """Revoke a key: the next request made with it is refused (401). Needs
    `api_keys.manage`."""
    return app.api_keys.revoke(caller, key_id)
