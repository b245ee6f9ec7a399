"""Listing runs a page at a time: filters and the cursor of ``app.runs.page``."""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from tether.ids import parse_id
from tether.runs.models import Run, RunStatus
from tether.storage.stores import RunStore


class RunQuery(BaseModel):
    """Which runs to list. Runs come newest first by id (creation order for the ids Tether
    makes); ``before`` (the last run id of the previous page) continues a listing, so pages
    neither repeat nor skip a run, whatever starts or changes meanwhile."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: RunStatus | None = None
    workflow: str | None = Field(None, min_length=1, max_length=200)
    created_after: AwareDatetime | None = Field(None, description="at or after this time")
    created_before: AwareDatetime | None = Field(None, description="before this time")
    before: str | None = Field(None, description="the last run id of the previous page")
    limit: int = Field(50, ge=1, le=10_000)

    @field_validator("before")
    @classmethod
    def _an_id(cls, value: str | None) -> str | None:
        return None if value is None else str(parse_id(value, what="before"))

    def page_txn(self, txn: RunStore, tenant_id: str) -> list[Run]:
        return txn.list_runs_page(
            tenant_id,
            status=self.status.value if self.status else None,
            workflow=self.workflow,
            created_after=self.created_after,
            created_before=self.created_before,
            before_run_id=self.before,
            limit=self.limit,
        )
