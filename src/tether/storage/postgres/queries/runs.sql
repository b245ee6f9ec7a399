-- Named queries of the run engine (PostgreSQL) where its SQL differs from
-- storage/queries/runs.sql, or that only PostgreSQL has. Parameters use %(name)s.

-- name: list_runs
SELECT * FROM runs
WHERE tenant_id = %(tenant_id)s AND (%(status)s::text IS NULL OR status = %(status)s::text)
ORDER BY updated_at DESC, run_id DESC
LIMIT %(limit)s;

-- name: save_run
-- Writes the mutable columns only if the run is still at the version (and lease) the
-- writer read; otherwise no row is returned and the caller must stop.
UPDATE runs
SET status = %(status)s, current_node = %(current_node)s, state_version = %(state_version)s,
    checkpoint_seq = %(checkpoint_seq)s, full_seq = %(full_seq)s, delta_bytes = %(delta_bytes)s,
    full_bytes = %(full_bytes)s,
    event_seq = %(event_seq)s, version = version + 1, lease_owner = %(lease_owner)s,
    lease_expires_at = %(lease_expires_at)s, attempt = %(attempt)s, steps = %(steps)s,
    resume_at = %(resume_at)s, wait_id = %(wait_id)s, error = %(error)s, visits = %(visits)s,
    storage_faults = %(storage_faults)s,
    updated_at = %(updated_at)s, updated_by = %(updated_by)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND version = %(expected_version)s
  AND lease_owner IS NOT DISTINCT FROM %(expected_owner)s::text
RETURNING version, cancel_requested;

-- name: save_running_run
-- save_run for a write that leaves a running run running, with no resume time (a step):
-- it writes neither column, so the update moves no entry of an index on runs (the
-- by-status index holds no running run). Matches no row unless the run is running with
-- no resume time; save_run then decides.
UPDATE runs
SET current_node = %(current_node)s, state_version = %(state_version)s,
    checkpoint_seq = %(checkpoint_seq)s, full_seq = %(full_seq)s, delta_bytes = %(delta_bytes)s,
    full_bytes = %(full_bytes)s,
    event_seq = %(event_seq)s, version = version + 1, lease_owner = %(lease_owner)s,
    lease_expires_at = %(lease_expires_at)s, attempt = %(attempt)s, steps = %(steps)s,
    wait_id = %(wait_id)s, error = %(error)s, visits = %(visits)s,
    storage_faults = %(storage_faults)s,
    updated_at = %(updated_at)s, updated_by = %(updated_by)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND version = %(expected_version)s
  AND lease_owner IS NOT DISTINCT FROM %(expected_owner)s::text AND status = 'running'
  AND resume_at IS NULL
RETURNING version, cancel_requested;

-- name: save_run_guarded
-- save_run that aborts the whole transaction (SQLSTATE TT001 / TT002) instead of returning
-- no row, so a step can be sent as one script in a single round trip.
WITH saved AS (
UPDATE runs
SET status = %(status)s, current_node = %(current_node)s, state_version = %(state_version)s,
    checkpoint_seq = %(checkpoint_seq)s, full_seq = %(full_seq)s, delta_bytes = %(delta_bytes)s,
    full_bytes = %(full_bytes)s,
    event_seq = %(event_seq)s, version = version + 1, lease_owner = %(lease_owner)s,
    lease_expires_at = %(lease_expires_at)s, attempt = %(attempt)s, steps = %(steps)s,
    resume_at = %(resume_at)s, wait_id = %(wait_id)s, error = %(error)s, visits = %(visits)s,
    storage_faults = %(storage_faults)s,
    updated_at = %(updated_at)s, updated_by = %(updated_by)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND version = %(expected_version)s
  AND lease_owner IS NOT DISTINCT FROM %(expected_owner)s::text
RETURNING version, cancel_requested
)
SELECT version, cancel_requested,
       tether_step_guard((SELECT count(*) FROM saved)::integer,
                         coalesce((SELECT bool_or(cancel_requested) FROM saved), false),
                         %(cancellable)s) AS guard
FROM (SELECT 1) AS one LEFT JOIN saved ON true;

-- name: request_cancel
UPDATE runs SET cancel_requested = true, cancel_reason = %(reason)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
  AND status NOT IN ('completed', 'failed', 'cancelled')
RETURNING version;

-- name: claim_run
UPDATE runs
SET status = 'running', lease_owner = %(owner)s, lease_expires_at = %(lease_expires_at)s,
    version = version + 1, event_seq = event_seq + 1, lease_epoch = lease_epoch + 1,
    updated_at = %(now)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
  AND (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < %(now)s))
       OR (status = 'scheduled' AND resume_at <= %(now)s))
  AND workflow || '@' || workflow_version = ANY(%(workflow_keys)s::text[])
RETURNING *;

-- name: find_runnable
-- Recovery first: a run whose lease ran out (its worker died or stalled) goes before
-- queued and scheduled work, however long the backlog; then the highest priority, then the
-- oldest. A run whose tenant or workflow is at its concurrency limit waits.
SELECT tenant_id, run_id, workflow, parent_run_id, child_serial,
       EXISTS (SELECT 1 FROM run_limits l WHERE l.tenant_id = runs.tenant_id) AS tenant_limited
FROM runs
WHERE (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < %(now)s))
       OR (status = 'scheduled' AND resume_at <= %(now)s))
  AND workflow || '@' || workflow_version = ANY(%(workflow_keys)s::text[])
  AND NOT EXISTS (
      SELECT 1 FROM run_limits l
      WHERE l.tenant_id = runs.tenant_id
        AND l.max_running <= (SELECT count(*) FROM runs b
                              WHERE b.status = 'running' AND b.tenant_id = runs.tenant_id
                                AND b.lease_expires_at >= %(now)s))
  AND NOT EXISTS (
      SELECT 1 FROM jsonb_each_text(%(workflow_limits)s::jsonb) w
      WHERE w.key = runs.workflow
        AND w.value::integer <= (SELECT count(*) FROM runs b
                                 WHERE b.status = 'running' AND b.workflow = runs.workflow
                                   AND b.lease_expires_at >= %(now)s))
  AND NOT (child_serial = true AND EXISTS (
      SELECT 1 FROM runs s
      WHERE s.tenant_id = runs.tenant_id AND s.parent_run_id = runs.parent_run_id
        AND s.run_id <> runs.run_id AND s.status = 'running'
        AND s.lease_expires_at >= %(now)s))
ORDER BY CASE WHEN status = 'running' THEN 0 ELSE 1 END, priority DESC, updated_at
LIMIT %(limit)s
FOR UPDATE OF runs SKIP LOCKED;

-- name: lock_run_limits
-- Claims under a limit take the limit's lock (tenant first, then workflow, always in that
-- order) and count again: two workers cannot both fill the last slot.
SELECT pg_advisory_xact_lock(hashtext('tether.limit.tenant.' || %(tenant_id)s)),
       pg_advisory_xact_lock(hashtext('tether.limit.workflow.' || %(workflow)s));

-- name: list_waits
-- Oldest first; a page continues after the wait after_wait_id.
SELECT * FROM run_waits
WHERE tenant_id = %(tenant_id)s
  AND (%(kind)s::text IS NULL OR kind = %(kind)s::text)
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
  AND (%(run_id)s::text IS NULL OR run_id = %(run_id)s::text)
  AND (%(after_wait_id)s::text IS NULL OR (created_at, wait_id) > (
        SELECT created_at, wait_id FROM run_waits
        WHERE tenant_id = %(tenant_id)s AND wait_id = %(after_wait_id)s::text))
ORDER BY created_at, wait_id
LIMIT %(limit)s;

-- name: list_waits_newest
-- Newest first; a page continues below the wait after_wait_id.
SELECT * FROM run_waits
WHERE tenant_id = %(tenant_id)s
  AND (%(kind)s::text IS NULL OR kind = %(kind)s::text)
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
  AND (%(run_id)s::text IS NULL OR run_id = %(run_id)s::text)
  AND (%(after_wait_id)s::text IS NULL OR (created_at, wait_id) < (
        SELECT created_at, wait_id FROM run_waits
        WHERE tenant_id = %(tenant_id)s AND wait_id = %(after_wait_id)s::text))
ORDER BY created_at DESC, wait_id DESC
LIMIT %(limit)s;

-- name: lock_children
-- A serial child's claim takes its parent's lock and counts its running siblings again.
SELECT pg_advisory_xact_lock(hashtext('tether.children.' || %(tenant_id)s || '.'
                                      || %(parent_run_id)s));

-- name: listen_runs
-- Idle workers listen here; runs 0004's triggers notify when a run may be claimable.
LISTEN tether_runs;

-- name: list_runs_page
-- Newest first by id (UUIDv7: creation order); a page continues below before_run_id.
SELECT * FROM runs
WHERE tenant_id = %(tenant_id)s
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
  AND (%(workflow)s::text IS NULL OR workflow = %(workflow)s::text)
  AND (%(created_after)s::timestamptz IS NULL OR created_at >= %(created_after)s::timestamptz)
  AND (%(created_before)s::timestamptz IS NULL OR created_at < %(created_before)s::timestamptz)
  AND (%(before_run_id)s::text IS NULL OR run_id < %(before_run_id)s::text)
ORDER BY run_id DESC
LIMIT %(limit)s;

-- name: save_runs_guarded
-- save_run_guarded for the steps of a group commit, given as a JSON array of rows (all of
-- tenant %(tenant_id)s, runs %(run_ids)s): each run row is written only if still at its
-- step's version and lease. Aborts the transaction (SQLSTATE TT001 / TT002) unless every
-- step's guard passes, so the caller can write the steps again one by one, each under a
-- savepoint, to tell which failed. The tenant and the run ids reach the rows through the
-- primary key whatever the planner guesses of the JSON's row count (never a scan of runs).
WITH step AS (
    SELECT * FROM json_to_recordset(%(rows)s::json) AS s (
        tenant_id text, run_id text, expected_version bigint, expected_owner text,
        cancellable boolean, status text, current_node text, state_version integer,
        checkpoint_seq bigint, full_seq integer, delta_bytes integer, full_bytes integer,
        event_seq bigint, lease_owner text, lease_expires_at timestamptz, attempt integer,
        steps integer, resume_at timestamptz, wait_id text, error text, visits text,
        storage_faults integer, updated_at timestamptz, updated_by text)
), saved AS (
UPDATE runs AS r
SET status = s.status, current_node = s.current_node, state_version = s.state_version,
    checkpoint_seq = s.checkpoint_seq, full_seq = s.full_seq, delta_bytes = s.delta_bytes,
    full_bytes = s.full_bytes, event_seq = s.event_seq, version = r.version + 1,
    lease_owner = s.lease_owner, lease_expires_at = s.lease_expires_at, attempt = s.attempt,
    steps = s.steps, resume_at = s.resume_at, wait_id = s.wait_id, error = s.error,
    visits = s.visits, storage_faults = s.storage_faults, updated_at = s.updated_at,
    updated_by = s.updated_by
FROM step AS s
WHERE r.tenant_id = %(tenant_id)s AND r.run_id = ANY(%(run_ids)s::text[])
  AND r.tenant_id = s.tenant_id AND r.run_id = s.run_id AND r.version = s.expected_version
  AND r.lease_owner IS NOT DISTINCT FROM s.expected_owner
RETURNING r.run_id, r.version, r.cancel_requested, s.cancellable
)
SELECT saved.run_id, saved.version, saved.cancel_requested, guard.guard
FROM (SELECT tether_step_guard(
          ((SELECT count(*) FROM saved) = (SELECT count(*) FROM step))::integer,
          coalesce((SELECT bool_or(cancel_requested AND cancellable) FROM saved), false),
          true) AS guard) AS guard
LEFT JOIN saved ON true;

-- name: insert_checkpoints
-- insert_checkpoint for many checkpoints at once, given as a JSON array of rows.
INSERT INTO run_checkpoints
SELECT * FROM json_populate_recordset(NULL::run_checkpoints, %(rows)s::json);

-- name: insert_events
-- insert_event for many events at once, given as a JSON array of rows.
INSERT INTO run_events
SELECT * FROM json_populate_recordset(NULL::run_events, %(rows)s::json);
