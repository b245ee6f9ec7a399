"""Concurrency limits: per tenant (stored, set by an admin), per workflow (declared in
code, ``Workflow(max_running=...)``), and one child at a time among siblings started
without ``parallel``.

Finding work skips runs whose tenant or workflow is at its limit; the claim then counts
again under the limits' lock, so two workers cannot both take the last slot (PostgreSQL
takes advisory locks; SQLite's writers are serialised already).
"""

from __future__ import annotations

from datetime import datetime

from tether.runs.models import Run
from tether.runs.workflow import WorkflowRegistry
from tether.storage.rows import RunnableRun
from tether.storage.stores import RunStore


def within_limits_txn(
    txn: RunStore, registry: WorkflowRegistry, run: Run | RunnableRun, now: datetime
) -> bool:
    """Whether claiming ``run`` keeps its tenant and workflow within their limits, counted
    under the limits' lock (held until the claim commits). Found by
    :meth:`~tether.storage.stores.RunStore.find_runnable`, the run says whether its tenant
    has a limit; otherwise the limit is read first.

    In a tenant transaction on PostgreSQL, row-level security hides other tenants' runs,
    so a workflow's limit counts the runs of that tenant only; workers claim in a system
    transaction, which counts them all.
    """
    if run.child_serial and run.parent_run_id is not None:
        txn.lock_children(run.tenant_id, run.parent_run_id)
        if txn.running_siblings(run.tenant_id, run.parent_run_id, run.run_id, now=now):
            return False
    workflow_limit = registry.limits.get(run.workflow)
    if isinstance(run, RunnableRun):
        tenant_limited = run.tenant_limited
    else:
        tenant_limited = txn.get_run_limit(run.tenant_id) is not None
    if workflow_limit is None and not tenant_limited:
        return True
    txn.lock_run_limits(run.tenant_id, run.workflow)
    counts = txn.running_counts(run.tenant_id, run.run_id, run.workflow, now=now)
    if counts.tenant_limit is not None and counts.tenant_running >= counts.tenant_limit:
        return False
    return workflow_limit is None or counts.workflow_running < workflow_limit
