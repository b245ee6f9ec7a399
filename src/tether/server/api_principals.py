"""``/api/v1/principals``: who acts in the tenant, and with which roles."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from tether.principals import Role
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS
from tether.tenants import PrincipalRecord

router = APIRouter(tags=["principals"], responses=COMMON_ERRORS)


class Grant(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roles: list[Role] = Field(min_length=1, max_length=5, description="The principal's roles.")


@router.get("/principals", summary="List principals", response_model=list[PrincipalRecord])
def list_principals(app: TetherApp, caller: Caller) -> list[PrincipalRecord]:
    """The tenant's principals and their roles. Needs `principals.read` (operator,
    admin)."""
    return app.tenants.principals(caller)


@router.put("/principals/{principal_id}", summary="Grant roles", response_model=PrincipalRecord)
def grant(principal_id: str, body: Grant, app: TetherApp, caller: Caller) -> PrincipalRecord:
    """Create the principal or replace its roles (keys made for it keep at most these).
    Needs `principals.manage` (admin)."""
    return app.tenants.grant(caller, principal_id, [role.value for role in body.roles])
