-- Named queries of the run engine, the same on SQLite and PostgreSQL.
-- Parameters use :name; the PostgreSQL backend reads them as %(name)s.

-- name: insert_run
INSERT INTO runs (tenant_id, run_id, workflow, workflow_version, status, current_node,
                  state_version, checkpoint_seq, full_seq, delta_bytes, full_bytes, event_seq, version,
                  lease_owner, lease_expires_at, attempt, steps, max_steps, deadline,
                  resume_at, wait_id, cancel_requested, error, visits, created_at,
                  created_by, updated_at, updated_by, lease_epoch, storage_faults, priority,
                  parent_run_id, parent_wait_id, child_serial)
VALUES (:tenant_id, :run_id, :workflow, :workflow_version, :status, :current_node,
        :state_version, :checkpoint_seq, :full_seq, :delta_bytes, :full_bytes,
        :event_seq, :version,
        :lease_owner, :lease_expires_at, :attempt, :steps, :max_steps, :deadline,
        :resume_at, :wait_id, :cancel_requested, :error, :visits, :created_at,
        :created_by, :updated_at, :updated_by, :lease_epoch, :storage_faults, :priority,
        :parent_run_id, :parent_wait_id, :child_serial);

-- name: get_run
SELECT * FROM runs WHERE tenant_id = :tenant_id AND run_id = :run_id;

-- name: renew_lease
-- The heartbeat: extend the lease of the claim that holds it (owner and epoch), without
-- touching the version, so the claim's own guarded writes are not disturbed.
UPDATE runs SET lease_expires_at = :lease_expires_at
WHERE tenant_id = :tenant_id AND run_id = :run_id AND lease_owner = :owner
  AND lease_epoch = :epoch AND status = 'running'
RETURNING lease_epoch;

-- name: release_after_fault
-- A storage fault stopped the claim's node: hand the run back (runnable at :resume_at)
-- and count the fault, only if this claim (owner and epoch) still holds the lease.
UPDATE runs
SET status = 'scheduled', resume_at = :resume_at, lease_owner = NULL,
    lease_expires_at = NULL, storage_faults = storage_faults + 1, error = :error,
    version = version + 1, event_seq = event_seq + 1, updated_at = :now,
    updated_by = :owner
WHERE tenant_id = :tenant_id AND run_id = :run_id AND lease_owner = :owner
  AND lease_epoch = :epoch AND status = 'running'
RETURNING *;

-- name: mark_call_ended
-- A claim handed its run back after a storage fault with this effect's call over but its
-- outcome unrecorded: the time the call ended tells the next claim that it is not in
-- flight. Only an intent still open is marked (a result that did commit stays).
UPDATE run_journal SET finished_at = :finished_at
WHERE tenant_id = :tenant_id AND run_id = :run_id AND node = :node AND visit = :visit
  AND position = :position AND status = 'intent' AND finished_at IS NULL;

-- name: insert_checkpoint
INSERT INTO run_checkpoints (tenant_id, run_id, seq, node, next_node, kind, payload,
                             state_version, created_at)
VALUES (:tenant_id, :run_id, :seq, :node, :next_node, :kind, :payload, :state_version,
        :created_at);

-- name: list_checkpoints
SELECT * FROM run_checkpoints
WHERE tenant_id = :tenant_id AND run_id = :run_id AND seq >= :from_seq
ORDER BY seq;

-- name: upsert_journal_entry
INSERT INTO run_journal (tenant_id, run_id, node, visit, position, name, kind,
                         idempotency_key, status, request_digest, result, error, retry_safe,
                         started_at, finished_at, duration_ms, tokens_in, tokens_out,
                         cost_usd, wait_id)
VALUES (:tenant_id, :run_id, :node, :visit, :position, :name, :kind, :idempotency_key,
        :status, :request_digest, :result, :error, :retry_safe, :started_at, :finished_at,
        :duration_ms, :tokens_in, :tokens_out, :cost_usd, :wait_id)
ON CONFLICT (tenant_id, run_id, node, visit, position) DO UPDATE
SET name = excluded.name, kind = excluded.kind, idempotency_key = excluded.idempotency_key,
    status = excluded.status, request_digest = excluded.request_digest,
    result = excluded.result, error = excluded.error, retry_safe = excluded.retry_safe,
    started_at = excluded.started_at, finished_at = excluded.finished_at,
    duration_ms = excluded.duration_ms, tokens_in = excluded.tokens_in,
    tokens_out = excluded.tokens_out, cost_usd = excluded.cost_usd,
    wait_id = excluded.wait_id;

-- name: list_journal_visit
SELECT * FROM run_journal
WHERE tenant_id = :tenant_id AND run_id = :run_id AND node = :node AND visit = :visit
ORDER BY position;

-- name: list_journal
SELECT * FROM run_journal
WHERE tenant_id = :tenant_id AND run_id = :run_id
ORDER BY started_at, node, visit, position;

-- name: insert_wait
INSERT INTO run_waits (tenant_id, wait_id, run_id, node, visit, position, kind, reason,
                       status, message, request, action_digest, approver_role,
                       requested_by, resume_at, expires_at, created_at, resolved_at,
                       resolved_by, resolution)
VALUES (:tenant_id, :wait_id, :run_id, :node, :visit, :position, :kind, :reason, :status,
        :message, :request, :action_digest, :approver_role, :requested_by, :resume_at,
        :expires_at, :created_at, :resolved_at, :resolved_by, :resolution);

-- name: get_wait
SELECT * FROM run_waits WHERE tenant_id = :tenant_id AND wait_id = :wait_id;

-- name: find_expired_waits
SELECT tenant_id, wait_id FROM run_waits
WHERE status = 'open' AND expires_at IS NOT NULL AND expires_at <= :now
ORDER BY expires_at
LIMIT :limit;

-- name: resolve_wait
UPDATE run_waits
SET status = :status, resolved_at = :resolved_at, resolved_by = :resolved_by,
    resolution = :resolution
WHERE tenant_id = :tenant_id AND wait_id = :wait_id AND status = 'open'
RETURNING wait_id;

-- name: insert_event
INSERT INTO run_events (tenant_id, run_id, seq, at, type, node, duration_ms, data)
VALUES (:tenant_id, :run_id, :seq, :at, :type, :node, :duration_ms, :data);

-- name: list_events
SELECT * FROM run_events
WHERE tenant_id = :tenant_id AND run_id = :run_id AND seq > :after_seq
ORDER BY seq
LIMIT :limit;

-- name: running_counts
-- What a claim under a limit counts, after taking the limit's lock: the runs of the tenant
-- and of the workflow (any tenant) that hold a live lease, other than the candidate.
SELECT
    (SELECT count(*) FROM runs
     WHERE status = 'running' AND tenant_id = :tenant_id AND lease_expires_at >= :now
       AND run_id <> :run_id) AS tenant_running,
    (SELECT max_running FROM run_limits WHERE tenant_id = :tenant_id) AS tenant_limit,
    (SELECT count(*) FROM runs
     WHERE status = 'running' AND workflow = :workflow AND lease_expires_at >= :now
       AND NOT (tenant_id = :tenant_id AND run_id = :run_id)) AS workflow_running;

-- name: get_run_limit
SELECT max_running FROM run_limits WHERE tenant_id = :tenant_id;

-- name: set_run_limit
INSERT INTO run_limits (tenant_id, max_running, updated_at, updated_by)
VALUES (:tenant_id, :max_running, :updated_at, :updated_by)
ON CONFLICT (tenant_id) DO UPDATE
SET max_running = excluded.max_running, updated_at = excluded.updated_at,
    updated_by = excluded.updated_by;

-- name: delete_run_limit
DELETE FROM run_limits WHERE tenant_id = :tenant_id;

-- name: next_due
-- The earliest moment something becomes due without anyone acting: a scheduled run's
-- resume time, an open wait's expiry, or a running run's lease running out.
SELECT min(due) AS due FROM (
    SELECT min(resume_at) AS due FROM runs WHERE status = 'scheduled'
    UNION ALL
    SELECT min(expires_at) AS due FROM run_waits WHERE status = 'open'
    UNION ALL
    SELECT min(lease_expires_at) AS due FROM runs WHERE status = 'running'
) AS dues;

-- name: count_runs_by_status
SELECT status, count(*) AS runs FROM runs GROUP BY status;

-- name: oldest_runs
-- The oldest running run (by creation) and the run waiting longest (since it parked).
SELECT
    (SELECT min(created_at) FROM runs WHERE status = 'running') AS running_since,
    (SELECT min(updated_at) FROM runs
     WHERE status IN ('waiting_for_user', 'waiting_for_approval', 'paused', 'scheduled',
                      'waiting_for_children'))
        AS waiting_since;

-- name: queue_depth
-- Runs a worker could claim now (limits aside): queued, due, or with a lease run out.
-- Version 0 is a LangGraph thread's run, which its own process resumes, not a worker.
SELECT count(*) AS runs FROM runs
WHERE workflow_version > 0
  AND (status = 'queued'
       OR (status = 'scheduled' AND resume_at <= :now)
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < :now)));

-- name: approval_counts
SELECT count(*) AS pending,
       count(CASE WHEN expires_at <= :soon THEN 1 END) AS expiring
FROM run_waits WHERE status = 'open' AND kind = 'approval';

-- name: failures_by_node
SELECT current_node AS node, count(*) AS runs FROM runs
WHERE status = 'failed'
GROUP BY current_node;

-- name: list_children
SELECT * FROM runs
WHERE tenant_id = :tenant_id AND parent_run_id = :parent_run_id
ORDER BY created_at, run_id;

-- name: running_siblings
-- Siblings of a serial child holding a live lease, counted after taking the parent's lock.
SELECT count(*) AS running FROM runs
WHERE tenant_id = :tenant_id AND parent_run_id = :parent_run_id AND run_id <> :run_id
  AND status = 'running' AND lease_expires_at >= :now;

-- name: find_child_waits_to_settle
-- Open waits on children of which at least one has finished: the caller checks whether
-- enough have (all, any, or a count).
SELECT DISTINCT c.tenant_id, c.parent_wait_id AS wait_id
FROM runs c JOIN run_waits w ON w.tenant_id = c.tenant_id AND w.wait_id = c.parent_wait_id
WHERE w.status = 'open' AND c.status IN ('completed', 'failed', 'cancelled')
LIMIT :limit;

-- name: stuck_no_checkpoint
-- Runs of :workflow due to make progress (queued or running) whose last checkpoint is
-- older than :cutoff (the workflow's checkpoint SLA ago).
SELECT r.run_id, r.workflow, r.status, max(c.created_at) AS since, 'no_checkpoint' AS cause
FROM runs r
JOIN run_checkpoints c ON c.tenant_id = r.tenant_id AND c.run_id = r.run_id
WHERE r.tenant_id = :tenant_id AND r.workflow = :workflow AND r.status IN ('queued', 'running')
GROUP BY r.run_id, r.workflow, r.status
HAVING max(c.created_at) < :cutoff;

-- name: stuck_lease_expired
-- Running runs whose lease ran out before :cutoff and that no worker has claimed since.
SELECT run_id, workflow, status, COALESCE(lease_expires_at, updated_at) AS since,
       'lease_expired' AS cause
FROM runs
WHERE tenant_id = :tenant_id AND status = 'running'
  AND COALESCE(lease_expires_at, updated_at) < :cutoff
  AND (lease_owner IS NULL OR lease_expires_at IS NOT NULL);

-- name: stuck_expired_waits
-- Open waits of unfinished runs past their expiry since before :cutoff: nothing expired
-- them (no worker is expiring waits).
SELECT r.run_id, r.workflow, r.status, w.expires_at AS since,
       CASE WHEN w.kind = 'approval' THEN 'approval_expired' ELSE 'wait_expired' END AS cause
FROM run_waits w
JOIN runs r ON r.tenant_id = w.tenant_id AND r.run_id = w.run_id
WHERE w.tenant_id = :tenant_id AND w.status = 'open' AND w.expires_at < :cutoff
  AND r.status NOT IN ('completed', 'failed', 'cancelled');

-- name: stuck_retries_exhausted
-- Failed runs whose node had been retried (attempt > 0) before the last failure.
SELECT run_id, workflow, status, updated_at AS since, 'retries_exhausted' AS cause
FROM runs
WHERE tenant_id = :tenant_id AND status = 'failed' AND attempt > 0;

-- name: stuck_effect_unanswered
-- Unfinished runs with an effect recorded as intended before :cutoff and no result since:
-- the external call never returned (or its result was never recorded).
SELECT r.run_id, r.workflow, r.status, min(j.started_at) AS since,
       'effect_unanswered' AS cause
FROM run_journal j
JOIN runs r ON r.tenant_id = j.tenant_id AND r.run_id = j.run_id
WHERE j.tenant_id = :tenant_id AND j.kind = 'effect' AND j.status = 'intent'
  AND j.started_at < :cutoff
  AND r.status NOT IN ('completed', 'failed', 'cancelled')
GROUP BY r.run_id, r.workflow, r.status;

-- name: stuck_repeated_takeovers
-- Unfinished runs taken over from a dead or stalled worker at least :takeovers times
-- (claim events marked by :takeover_mark).
SELECT r.run_id, r.workflow, r.status, max(e.at) AS since, 'repeated_takeovers' AS cause
FROM run_events e
JOIN runs r ON r.tenant_id = e.tenant_id AND r.run_id = e.run_id
WHERE e.tenant_id = :tenant_id AND e.type = 'run.claimed' AND e.data LIKE :takeover_mark
  AND r.status NOT IN ('completed', 'failed', 'cancelled')
GROUP BY r.run_id, r.workflow, r.status
HAVING count(*) >= :takeovers;

-- name: stuck_status_mismatch
-- Runs whose status and queue columns disagree, so no worker or answer can move them: a
-- scheduled run with no resume time, a queued or scheduled run holding a lease, a running
-- run with an owner but no lease expiry, a run waiting on a person with no open wait.
SELECT run_id, workflow, status, updated_at AS since, 'status_mismatch' AS cause
FROM runs r
WHERE tenant_id = :tenant_id
  AND ((status = 'scheduled' AND resume_at IS NULL)
       OR (status IN ('queued', 'scheduled') AND lease_owner IS NOT NULL)
       OR (status = 'running' AND lease_owner IS NOT NULL AND lease_expires_at IS NULL)
       OR (status IN ('waiting_for_user', 'waiting_for_approval')
           AND NOT EXISTS (SELECT 1 FROM run_waits w
                           WHERE w.tenant_id = r.tenant_id AND w.run_id = r.run_id
                             AND w.status = 'open')));

-- name: set_run_control
-- An operator's change to what save_run leaves alone: the workflow version the run is
-- pinned to, and a pending request that its worker stop it (cancel or pause). Written in
-- the transaction that has just saved the run row, so the row is already the writer's.
UPDATE runs
SET workflow_version = :workflow_version, cancel_requested = :cancel_requested,
    cancel_reason = :cancel_reason
WHERE tenant_id = :tenant_id AND run_id = :run_id
RETURNING version;
