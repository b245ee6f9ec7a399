-- Named queries of the run engine (SQLite) where its SQL differs from
-- storage/queries/runs.sql, or that only SQLite has. Parameters use :name.

-- name: list_runs
SELECT * FROM runs
WHERE tenant_id = :tenant_id AND (:status IS NULL OR status = :status)
ORDER BY updated_at DESC, run_id DESC
LIMIT :limit;

-- name: save_run
-- Writes the mutable columns only if the run is still at the version (and lease) the
-- writer read; otherwise no row is returned and the caller must stop.
UPDATE runs
SET status = :status, current_node = :current_node, state_version = :state_version,
    checkpoint_seq = :checkpoint_seq, full_seq = :full_seq, delta_bytes = :delta_bytes,
    full_bytes = :full_bytes,
    event_seq = :event_seq, version = version + 1, lease_owner = :lease_owner,
    lease_expires_at = :lease_expires_at, attempt = :attempt, steps = :steps,
    resume_at = :resume_at, wait_id = :wait_id, error = :error, visits = :visits,
    storage_faults = :storage_faults,
    updated_at = :updated_at, updated_by = :updated_by
WHERE tenant_id = :tenant_id AND run_id = :run_id AND version = :expected_version
  AND lease_owner IS :expected_owner
RETURNING version, cancel_requested;

-- name: save_running_run
-- save_run for a write that leaves a running run running, with no resume time (a step):
-- it writes neither column, so the update moves no entry of an index on runs (the
-- by-status index holds no running run). Matches no row unless the run is running with
-- no resume time; save_run then decides.
UPDATE runs
SET current_node = :current_node, state_version = :state_version,
    checkpoint_seq = :checkpoint_seq, full_seq = :full_seq, delta_bytes = :delta_bytes,
    full_bytes = :full_bytes,
    event_seq = :event_seq, version = version + 1, lease_owner = :lease_owner,
    lease_expires_at = :lease_expires_at, attempt = :attempt, steps = :steps,
    wait_id = :wait_id, error = :error, visits = :visits,
    storage_faults = :storage_faults,
    updated_at = :updated_at, updated_by = :updated_by
WHERE tenant_id = :tenant_id AND run_id = :run_id AND version = :expected_version
  AND lease_owner IS :expected_owner AND status = 'running' AND resume_at IS NULL
RETURNING version, cancel_requested;

-- name: request_cancel
UPDATE runs SET cancel_requested = 1, cancel_reason = :reason
WHERE tenant_id = :tenant_id AND run_id = :run_id
  AND status NOT IN ('completed', 'failed', 'cancelled')
RETURNING version;

-- name: claim_run
UPDATE runs
SET status = 'running', lease_owner = :owner, lease_expires_at = :lease_expires_at,
    version = version + 1, event_seq = event_seq + 1, lease_epoch = lease_epoch + 1,
    updated_at = :now
WHERE tenant_id = :tenant_id AND run_id = :run_id
  AND (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < :now))
       OR (status = 'scheduled' AND resume_at <= :now))
  AND workflow || '@' || workflow_version IN (SELECT value FROM json_each(:workflow_keys))
RETURNING *;

-- name: find_runnable
-- Recovery first: a run whose lease ran out (its worker died or stalled) goes before
-- queued and scheduled work, however long the backlog; then the highest priority, then the
-- oldest. A run whose tenant or workflow is at its concurrency limit waits.
SELECT tenant_id, run_id, workflow, parent_run_id, child_serial,
       EXISTS (SELECT 1 FROM run_limits l WHERE l.tenant_id = runs.tenant_id) AS tenant_limited
FROM runs
WHERE (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < :now))
       OR (status = 'scheduled' AND resume_at <= :now))
  AND workflow || '@' || workflow_version IN (SELECT value FROM json_each(:workflow_keys))
  AND NOT EXISTS (
      SELECT 1 FROM run_limits l
      WHERE l.tenant_id = runs.tenant_id
        AND l.max_running <= (SELECT count(*) FROM runs b
                              WHERE b.status = 'running' AND b.tenant_id = runs.tenant_id
                                AND b.lease_expires_at >= :now))
  AND NOT EXISTS (
      SELECT 1 FROM json_each(:workflow_limits) w
      WHERE w.key = runs.workflow
        AND w.value <= (SELECT count(*) FROM runs b
                        WHERE b.status = 'running' AND b.workflow = runs.workflow
                          AND b.lease_expires_at >= :now))
  AND NOT (child_serial = 1 AND EXISTS (
      SELECT 1 FROM runs s
      WHERE s.tenant_id = runs.tenant_id AND s.parent_run_id = runs.parent_run_id
        AND s.run_id <> runs.run_id AND s.status = 'running'
        AND s.lease_expires_at >= :now))
ORDER BY CASE WHEN status = 'running' THEN 0 ELSE 1 END, priority DESC, updated_at
LIMIT :limit;

-- name: lock_run_limits
-- SQLite serialises writers (BEGIN IMMEDIATE): the claim's count is already exclusive.
SELECT 1 AS locked;

-- name: list_waits
-- Oldest first; a page continues after the wait after_wait_id.
SELECT * FROM run_waits
WHERE tenant_id = :tenant_id
  AND (:kind IS NULL OR kind = :kind)
  AND (:status IS NULL OR status = :status)
  AND (:run_id IS NULL OR run_id = :run_id)
  AND (:after_wait_id IS NULL OR (created_at, wait_id) > (
        SELECT created_at, wait_id FROM run_waits
        WHERE tenant_id = :tenant_id AND wait_id = :after_wait_id))
ORDER BY created_at, wait_id
LIMIT :limit;

-- name: list_waits_newest
-- Newest first; a page continues below the wait after_wait_id.
SELECT * FROM run_waits
WHERE tenant_id = :tenant_id
  AND (:kind IS NULL OR kind = :kind)
  AND (:status IS NULL OR status = :status)
  AND (:run_id IS NULL OR run_id = :run_id)
  AND (:after_wait_id IS NULL OR (created_at, wait_id) < (
        SELECT created_at, wait_id FROM run_waits
        WHERE tenant_id = :tenant_id AND wait_id = :after_wait_id))
ORDER BY created_at DESC, wait_id DESC
LIMIT :limit;

-- name: lock_children
-- SQLite serialises writers (BEGIN IMMEDIATE): the claim's count is already exclusive.
SELECT 1 AS locked;

-- name: data_version
-- Changes whenever another connection commits to the file: what idle workers watch.
PRAGMA data_version;

-- name: list_runs_page
-- Newest first by id (UUIDv7: creation order); a page continues below before_run_id.
SELECT * FROM runs
WHERE tenant_id = :tenant_id
  AND (:status IS NULL OR status = :status)
  AND (:workflow IS NULL OR workflow = :workflow)
  AND (:created_after IS NULL OR created_at >= :created_after)
  AND (:created_before IS NULL OR created_at < :created_before)
  AND (:before_run_id IS NULL OR run_id < :before_run_id)
ORDER BY run_id DESC
LIMIT :limit;
