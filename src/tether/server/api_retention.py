"""Run retention, legal holds on runs, ``gc`` and the housekeeping pass over HTTP.

Each endpoint calls one operation of ``app.retention`` or ``app.housekeeping`` with the
caller's principal. ``gc`` compacts in batches, each its own short transaction, so a
request over many runs never holds a long lock; a dry run writes nothing.
"""

from __future__ import annotations

import os
import socket
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from tether.housekeeping import PassReport
from tether.runs.retention import MAX_KEEP_DAYS, GcReport, RunHold
from tether.server.api_runs import RunId
from tether.server.auth import Caller, TetherApp
from tether.server.problems import COMMON_ERRORS, error_responses

router = APIRouter(tags=["retention"], responses=COMMON_ERRORS)

WorkflowName = Annotated[
    str,
    Path(
        min_length=1,
        max_length=200,
        description="A workflow's name, or * for every workflow without a policy of its own.",
    ),
]


class KeepDays(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keep_days: int = Field(
        ge=0, le=MAX_KEEP_DAYS, description="Days after a run finished before it is compacted."
    )


class RetentionPolicy(KeepDays):
    workflow: str


class Reason(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(
        min_length=1, max_length=2000, description="Why (required); kept as an erasable note."
    )


class HoldPlaced(BaseModel):
    hold_id: str


class HoldsReleased(BaseModel):
    released: int = Field(description="How many holds the run had.")


class Gc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool = Field(False, description="Report what would go; write nothing.")
    batch: int = Field(50, ge=1, le=1000, description="Runs compacted per transaction.")


@router.get("/retention/policies", summary="Run retention policies", response_model=dict[str, int])
def policies(app: TetherApp, caller: Caller) -> dict[str, int]:
    """Days a finished run is kept in full, per workflow (`*`: every workflow without a
    policy of its own); runs of other workflows are kept forever. Needs `runs.read`."""
    return app.retention.policies(caller)


@router.put(
    "/retention/policies/{workflow}",
    summary="Set a run retention policy",
    response_model=RetentionPolicy,
)
def set_policy(
    workflow: WorkflowName, body: KeepDays, app: TetherApp, caller: Caller
) -> RetentionPolicy:
    """Compact the workflow's finished runs `keep_days` after they finished: each keeps its
    final checkpoint, a summary of its effect journal and its audit entries; events,
    intermediate checkpoints and journal payloads go (at the next `gc`). Needs
    `runs.retention` (admin)."""
    app.retention.set_policy(caller, workflow, body.keep_days)
    return RetentionPolicy(workflow=workflow, keep_days=body.keep_days)


@router.delete(
    "/retention/policies/{workflow}", summary="Remove a run retention policy", status_code=204
)
def remove_policy(workflow: WorkflowName, app: TetherApp, caller: Caller) -> None:
    """Keep the workflow's runs forever again (or under `*`). A workflow without a policy
    is 404. Needs `runs.retention`."""
    app.retention.remove_policy(caller, workflow)


@router.get("/retention/holds", summary="Legal holds on runs", response_model=list[RunHold])
def holds(
    app: TetherApp,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=10_000, description="Most holds to list.")] = 1000,
) -> list[RunHold]:
    """The legal holds in force: which run, who placed it, and the digest of its reason
    (`GET /notes/{digest}` reads it). A held run is never compacted. Needs `runs.read`."""
    return app.retention.holds(caller, limit=limit)


@router.post(
    "/runs/{run_id}/holds", summary="Place a legal hold", status_code=201, response_model=HoldPlaced
)
def hold(run_id: RunId, body: Reason, app: TetherApp, caller: Caller) -> HoldPlaced:
    """Place a legal hold on a run: `gc` never compacts it until every hold is released.
    The reason is required (kept as an erasable note, cited by digest). Needs
    `runs.retention` (admin)."""
    return HoldPlaced(hold_id=app.retention.hold(caller, run_id, reason=body.reason))


@router.post(
    "/runs/{run_id}/holds/release",
    summary="Release a run's legal holds",
    response_model=HoldsReleased,
    responses=error_responses(409),
)
def release(run_id: RunId, body: Reason, app: TetherApp, caller: Caller) -> HoldsReleased:
    """Release every legal hold on the run, with a reason; a run without one is a
    conflict. Needs `runs.retention`."""
    return HoldsReleased(released=app.retention.release(caller, run_id, reason=body.reason))


@router.post("/gc", summary="Compact old runs", response_model=GcReport)
def gc(body: Gc, app: TetherApp, caller: Caller) -> GcReport:
    """Compact every finished run of the tenant past its workflow's retention period, in
    batches of `batch` runs (one transaction and one `run.retained` audit entry each);
    runs under a legal hold are skipped. With `dry_run` nothing is written and the answer
    says what a real pass would remove now. Needs `housekeeping` (operator, admin)."""
    return app.retention.gc(caller, dry_run=body.dry_run, batch=body.batch)


@router.post(
    "/housekeeping/run",
    summary="Run the housekeeping pass now",
    response_model=PassReport,
    responses=error_responses(409),
)
def housekeeping(app: TetherApp, caller: Caller) -> PassReport:
    """Run the tenant's housekeeping pass now, due or not: the memory retention cycle,
    thread retention, the working-memory purge and run retention, audited with counts. A
    pass running elsewhere is a conflict. Needs `housekeeping` (operator, admin)."""
    owner = f"http:{socket.gethostname()}:{os.getpid()}"
    return app.housekeeping.run(caller, owner=owner)
