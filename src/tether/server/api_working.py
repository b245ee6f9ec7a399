"""``/api/v1/working/{session_id}``: a session's working memory (key/value state with a
time to live; the session id is the conversation thread's).

Each endpoint calls one operation of ``app.working`` with the caller's principal. A key
travels as the ``key`` query parameter, so any key (slashes included) can be named.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.errors import NotFound
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS
from tether.working.service import MAX_ID_CHARS, MAX_KEY_CHARS, MAX_TTL_S, WorkingEntry

router = APIRouter(tags=["working"], responses=COMMON_ERRORS)

SessionId = Annotated[
    str, Path(min_length=1, max_length=MAX_ID_CHARS, description="The session (thread) id.")
]
Key = Annotated[str, Query(min_length=1, max_length=MAX_KEY_CHARS, description="The entry's key.")]
Ttl = Field(
    None, gt=0, le=MAX_TTL_S, description="Seconds the entry lives from now; null: until deleted."
)


class NewValue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: Any = Field(description="Any JSON value (at most 1 MiB).")
    ttl_s: float | None = Ttl


class NewTtl(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttl_s: float | None = Ttl


class Changed(BaseModel):
    changed: bool = Field(description="Whether a live entry was there.")


class Cleared(BaseModel):
    removed: int = Field(description="How many live entries the session had.")


@router.get(
    "/working/{session_id}", summary="A session's entries", response_model=list[WorkingEntry]
)
def entries(session_id: SessionId, app: TetherApp, caller: Caller) -> list[WorkingEntry]:
    """Every live entry of the session, by key, with its expiry (an expired entry is never
    shown). Needs `working.read` (every role)."""
    return app.working.entries(caller, session_id)


@router.get(
    "/working/{session_id}/values",
    summary="Some values of a session",
    response_model=dict[str, Any],
)
def values(
    session_id: SessionId,
    app: TetherApp,
    caller: Caller,
    key: Annotated[list[str], Query(min_length=1, max_length=500, description="The keys to read.")],
) -> dict[str, Any]:
    """The live values among the given keys, by key, read at once (missing and expired
    keys are left out). Needs `working.read`."""
    return app.working.get_many(caller, session_id, key)


@router.get(
    "/working/{session_id}/entry", summary="One working-memory entry", response_model=WorkingEntry
)
def entry(session_id: SessionId, key: Key, app: TetherApp, caller: Caller) -> WorkingEntry:
    """The live entry under `key` with its expiry; 404 when there is none (or it expired).
    Needs `working.read`."""
    found = app.working.entry(caller, session_id, key)
    if found is None:
        raise NotFound(f"session {session_id} has no live entry under that key")
    return found


@router.put("/working/{session_id}/entry", summary="Set an entry", status_code=204)
def set_entry(
    session_id: SessionId, key: Key, body: NewValue, app: TetherApp, caller: Caller
) -> None:
    """Store `value` under `key`, replacing any earlier value and its expiry. Needs
    `working.write` (agent, operator, admin)."""
    app.working.set(caller, session_id, key, body.value, ttl_s=body.ttl_s)


@router.post("/working/{session_id}/entry/touch", summary="Renew an entry", response_model=Changed)
def touch(session_id: SessionId, key: Key, body: NewTtl, app: TetherApp, caller: Caller) -> Changed:
    """Give a live entry a new time to live from now (null: until deleted). Needs
    `working.write`."""
    return Changed(changed=app.working.touch(caller, session_id, key, ttl_s=body.ttl_s))


@router.delete("/working/{session_id}/entry", summary="Delete an entry", response_model=Changed)
def delete(session_id: SessionId, key: Key, app: TetherApp, caller: Caller) -> Changed:
    """Remove the entry under `key`. Needs `working.write`."""
    return Changed(changed=app.working.delete(caller, session_id, key))


@router.delete("/working/{session_id}", summary="Clear a session", response_model=Cleared)
def clear(session_id: SessionId, app: TetherApp, caller: Caller) -> Cleared:
    """Remove every entry of the session. Needs `working.write`."""
    return Cleared(removed=app.working.clear(caller, session_id))
