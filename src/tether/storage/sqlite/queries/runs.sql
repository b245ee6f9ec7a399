-- Named queries of the run engine (SQLite). Parameters use :name.

-- name: insert_run
INSERT INTO runs (tenant_id, run_id, workflow, workflow_version, status, current_node,
                  state_version, checkpoint_seq, full_seq, delta_bytes, full_bytes, event_seq, version,
                  lease_owner, lease_expires_at, attempt, steps, max_steps, deadline,
                  resume_at, wait_id, cancel_requested, error, visits, created_at,
                  created_by, updated_at, updated_by)
VALUES (:tenant_id, :run_id, :workflow, :workflow_version, :status, :current_node,
        :state_version, :checkpoint_seq, :full_seq, :delta_bytes, :full_bytes,
        :event_seq, :version,
        :lease_owner, :lease_expires_at, :attempt, :steps, :max_steps, :deadline,
        :resume_at, :wait_id, :cancel_requested, :error, :visits, :created_at,
        :created_by, :updated_at, :updated_by);

-- name: get_run
SELECT * FROM runs WHERE tenant_id = :tenant_id AND run_id = :run_id;

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
    updated_at = :updated_at, updated_by = :updated_by
WHERE tenant_id = :tenant_id AND run_id = :run_id AND version = :expected_version
  AND lease_owner IS :expected_owner
RETURNING version, cancel_requested;

-- name: request_cancel
UPDATE runs SET cancel_requested = 1
WHERE tenant_id = :tenant_id AND run_id = :run_id
  AND status NOT IN ('completed', 'failed', 'cancelled')
RETURNING version;

-- name: claim_run
UPDATE runs
SET status = 'running', lease_owner = :owner, lease_expires_at = :lease_expires_at,
    version = version + 1, event_seq = event_seq + 1, updated_at = :now
WHERE tenant_id = :tenant_id AND run_id = :run_id
  AND (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < :now))
       OR (status = 'scheduled' AND resume_at <= :now))
  AND workflow || '@' || workflow_version IN (SELECT value FROM json_each(:workflow_keys))
RETURNING *;

-- name: find_runnable
SELECT tenant_id, run_id FROM runs
WHERE (status = 'queued'
       OR (status = 'running' AND (lease_owner IS NULL OR lease_expires_at < :now))
       OR (status = 'scheduled' AND resume_at <= :now))
  AND workflow || '@' || workflow_version IN (SELECT value FROM json_each(:workflow_keys))
ORDER BY updated_at
LIMIT :limit;

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

-- name: list_waits
SELECT * FROM run_waits
WHERE tenant_id = :tenant_id
  AND (:kind IS NULL OR kind = :kind)
  AND (:status IS NULL OR status = :status)
  AND (:run_id IS NULL OR run_id = :run_id)
ORDER BY created_at, wait_id
LIMIT :limit;

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
