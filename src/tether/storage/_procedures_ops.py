"""Typed storage operations of procedures (published skill and policy sets)."""

from __future__ import annotations

from datetime import datetime

from tether.storage._transaction import QueryTransaction, Row
from tether.storage.rows import ProcedureVersionRow


class ProceduresOps(QueryTransaction):
    def _procedure_version(self, row: Row) -> ProcedureVersionRow:
        return ProcedureVersionRow(
            tenant_id=row["tenant_id"],
            version=row["version"],
            documents_json=row["documents"],
            source=row["source"],
            published_at=self._ts_out(row["published_at"]),
            published_by=row["published_by"],
        )

    def insert_procedure_version(self, row: ProcedureVersionRow) -> None:
        self._fetch(
            "insert_procedure_version",
            {
                "tenant_id": row.tenant_id,
                "version": row.version,
                "documents": row.documents_json,
                "source": row.source,
                "published_at": self._ts_in(row.published_at),
                "published_by": row.published_by,
            },
        )

    def get_procedure_version(self, tenant_id: str, version: str) -> ProcedureVersionRow | None:
        row = self._one("get_procedure_version", tenant_id=tenant_id, version=version)
        return self._procedure_version(row) if row else None

    def list_procedure_versions(self, tenant_id: str, *, limit: int) -> list[ProcedureVersionRow]:
        rows = self._fetch("list_procedure_versions", {"tenant_id": tenant_id, "limit": limit})
        return [self._procedure_version(row) for row in rows]

    def get_current_procedures(self, tenant_id: str) -> tuple[str, datetime, str] | None:
        row = self._one("get_current_procedures", tenant_id=tenant_id)
        if row is None:
            return None
        return row["version"], self._ts_out(row["updated_at"]), row["updated_by"]

    def set_current_procedures(
        self, tenant_id: str, version: str, *, at: datetime, by: str
    ) -> None:
        self._fetch(
            "set_current_procedures",
            {
                "tenant_id": tenant_id,
                "version": version,
                "updated_at": self._ts_in(at),
                "updated_by": by,
            },
        )
