-- Named queries of the run engine (PostgreSQL). Parameters use %(name)s.

-- name: insert_run
INSERT INTO runs (tenant_id, run_id, workflow, workflow_version, status, current_node,
                  state_version, checkpoint_seq, full_seq, delta_bytes, full_bytes, event_seq, version,
                  lease_owner, lease_expires_at, attempt, steps, max_steps, deadline,
                  resume_at, wait_id, cancel_requested, error, visits, created_at,
                  created_by, updated_at, updated_by)
VALUES (%(tenant_id)s, %(run_id)s, %(workflow)s, %(workflow_version)s, %(status)s, %(current_node)s,
        %(state_version)s, %(checkpoint_seq)s, %(full_seq)s, %(delta_bytes)s, %(full_bytes)s,
        %(event_seq)s, %(version)s,
        %(lease_owner)s, %(lease_expires_at)s, %(attempt)s, %(steps)s, %(max_steps)s, %(deadline)s,
        %(resume_at)s, %(wait_id)s, %(cancel_requested)s, %(error)s, %(visits)s, %(created_at)s,
        %(created_by)s, %(updated_at)s, %(updated_by)s);

-- name: get_run
SELECT * FROM runs WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s;

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
    updated_at = %(updated_at)s, updated_by = %(updated_by)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND version = %(expected_version)s
  AND lease_owner IS NOT DISTINCT FROM %(expected_owner)s::text
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
UPDATE runs SET cancel_requested = true
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
  AND status NOT IN ('completed', 'failed', 'cancelled')
RETURNING version;

-- name: claim_run
UPDATE runs
SET status = 'running', lease_owner = %(owner)s, lease_expires_at = %(lease_expires_at)s,
    version = version + 1, event_seq = event_seq + 1, updated_at = %(now)s
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
  AND (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < %(now)s))
       OR (status = 'scheduled' AND resume_at <= %(now)s))
  AND workflow || '@' || workflow_version = ANY(%(workflow_keys)s::text[])
RETURNING *;

-- name: find_runnable
SELECT tenant_id, run_id FROM runs
WHERE (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < %(now)s))
       OR (status = 'scheduled' AND resume_at <= %(now)s))
  AND workflow || '@' || workflow_version = ANY(%(workflow_keys)s::text[])
ORDER BY updated_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED;

-- name: insert_checkpoint
INSERT INTO run_checkpoints (tenant_id, run_id, seq, node, next_node, kind, payload,
                             state_version, created_at)
VALUES (%(tenant_id)s, %(run_id)s, %(seq)s, %(node)s, %(next_node)s, %(kind)s, %(payload)s, %(state_version)s,
        %(created_at)s);

-- name: list_checkpoints
SELECT * FROM run_checkpoints
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND seq >= %(from_seq)s
ORDER BY seq;

-- name: upsert_journal_entry
INSERT INTO run_journal (tenant_id, run_id, node, visit, position, name, kind,
                         idempotency_key, status, request_digest, result, error, retry_safe,
                         started_at, finished_at, duration_ms, tokens_in, tokens_out,
                         cost_usd, wait_id)
VALUES (%(tenant_id)s, %(run_id)s, %(node)s, %(visit)s, %(position)s, %(name)s, %(kind)s, %(idempotency_key)s,
        %(status)s, %(request_digest)s, %(result)s, %(error)s, %(retry_safe)s, %(started_at)s, %(finished_at)s,
        %(duration_ms)s, %(tokens_in)s, %(tokens_out)s, %(cost_usd)s, %(wait_id)s)
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
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND node = %(node)s AND visit = %(visit)s
ORDER BY position;

-- name: list_journal
SELECT * FROM run_journal
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
ORDER BY started_at, node, visit, position;

-- name: insert_wait
INSERT INTO run_waits (tenant_id, wait_id, run_id, node, visit, position, kind, reason,
                       status, message, request, action_digest, approver_role,
                       requested_by, resume_at, expires_at, created_at, resolved_at,
                       resolved_by, resolution)
VALUES (%(tenant_id)s, %(wait_id)s, %(run_id)s, %(node)s, %(visit)s, %(position)s, %(kind)s, %(reason)s, %(status)s,
        %(message)s, %(request)s, %(action_digest)s, %(approver_role)s, %(requested_by)s, %(resume_at)s,
        %(expires_at)s, %(created_at)s, %(resolved_at)s, %(resolved_by)s, %(resolution)s);

-- name: get_wait
SELECT * FROM run_waits WHERE tenant_id = %(tenant_id)s AND wait_id = %(wait_id)s;

-- name: list_waits
SELECT * FROM run_waits
WHERE tenant_id = %(tenant_id)s
  AND (%(kind)s::text IS NULL OR kind = %(kind)s::text)
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
  AND (%(run_id)s::text IS NULL OR run_id = %(run_id)s::text)
ORDER BY created_at, wait_id
LIMIT %(limit)s;

-- name: find_expired_waits
SELECT tenant_id, wait_id FROM run_waits
WHERE status = 'open' AND expires_at IS NOT NULL AND expires_at <= %(now)s
ORDER BY expires_at
LIMIT %(limit)s;

-- name: resolve_wait
UPDATE run_waits
SET status = %(status)s, resolved_at = %(resolved_at)s, resolved_by = %(resolved_by)s,
    resolution = %(resolution)s
WHERE tenant_id = %(tenant_id)s AND wait_id = %(wait_id)s AND status = 'open'
RETURNING wait_id;

-- name: insert_event
INSERT INTO run_events (tenant_id, run_id, seq, at, type, node, duration_ms, data)
VALUES (%(tenant_id)s, %(run_id)s, %(seq)s, %(at)s, %(type)s, %(node)s, %(duration_ms)s, %(data)s);

-- name: list_events
SELECT * FROM run_events
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND seq > %(after_seq)s
ORDER BY seq
LIMIT %(limit)s;
