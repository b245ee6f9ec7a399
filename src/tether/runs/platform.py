"""Where every tenant's runs stand, for the platform's administrators.

A tenant's principals see only their tenant. The platform administrators (principals of
the reserved tenant ``_global``) hold nothing inside an ordinary tenant, yet the people
who run the platform need to see where runs stand across it: which tenant has runs
failing or piling up. ``app.platform`` gives them exactly that and no more: the tenants'
ids and their run rows (status, workflow, node, times, error), never a run's state,
events, journal or approvals, and no way to act on one. Reading or acting on a run's
content takes a principal of its tenant.
"""

from __future__ import annotations

from tether.ids import check_name
from tether.permissions import authorize
from tether.principals import RESERVED_PREFIX, Principal
from tether.runs.listing import RunQuery
from tether.runs.models import Run
from tether.storage.base import Storage
from tether.validation import guarded


@guarded
class PlatformRuns:
    """``app.platform``: the run rows of any tenant, for platform administrators."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def tenants(self, principal: Principal) -> list[str]:
        """The ids of every ordinary tenant (reserved ones left out), sorted."""
        authorize(principal, "platform.tenants")
        with self._storage.system_transaction(write=False) as txn:
            rows = txn.list_tenants()
        return sorted(
            row.tenant_id for row in rows if not row.tenant_id.startswith(RESERVED_PREFIX)
        )

    def runs(
        self, principal: Principal, tenant_id: str, query: RunQuery | None = None
    ) -> list[Run]:
        """The run rows of ``tenant_id``, newest first, filtered and paged as
        ``app.runs.page`` pages its own tenant's (see :class:`RunQuery`)."""
        authorize(principal, "platform.runs")
        check_name(tenant_id, what="tenant")
        with self._storage.transaction(tenant_id, write=False) as txn:
            return (query or RunQuery()).page_txn(txn, tenant_id)
