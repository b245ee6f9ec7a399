-- Run retention, legal holds on runs, operator notes, housekeeping leases, the run inbox
-- and webhooks. Written once for both backends.

-- name: upsert_retention_policy
INSERT INTO run_retention_policies (tenant_id, workflow, keep_days, set_at, set_by)
VALUES (:tenant_id, :workflow, :keep_days, :set_at, :set_by)
ON CONFLICT (tenant_id, workflow) DO UPDATE
SET keep_days = excluded.keep_days, set_at = excluded.set_at, set_by = excluded.set_by

-- name: delete_retention_policy
DELETE FROM run_retention_policies
WHERE tenant_id = :tenant_id AND workflow = :workflow
RETURNING workflow

-- name: list_retention_policies
SELECT workflow, keep_days FROM run_retention_policies
WHERE tenant_id = :tenant_id
ORDER BY workflow

-- name: list_retention_candidates
SELECT r.run_id, r.workflow, r.updated_at,
       EXISTS (
           SELECT 1 FROM run_holds h
           WHERE h.tenant_id = r.tenant_id AND h.run_id = r.run_id AND h.released_at IS NULL
       ) AS held
FROM runs r
WHERE r.tenant_id = :tenant_id
  AND r.status IN ('completed', 'failed', 'cancelled')
  AND r.updated_at < :finished_before
  AND r.run_id > :after_run_id
  AND NOT EXISTS (
      SELECT 1 FROM run_retained k WHERE k.tenant_id = r.tenant_id AND k.run_id = r.run_id
  )
ORDER BY r.run_id
LIMIT :limit

-- name: count_run_rows
SELECT
    (SELECT COUNT(*) FROM run_events e
     WHERE e.tenant_id = :tenant_id AND e.run_id = :run_id) AS events,
    (SELECT COUNT(*) FROM run_checkpoints c
     WHERE c.tenant_id = :tenant_id AND c.run_id = :run_id) AS checkpoints,
    (SELECT COUNT(*) FROM run_journal j
     WHERE j.tenant_id = :tenant_id AND j.run_id = :run_id) AS journal,
    (SELECT COUNT(*) FROM run_journal j
     WHERE j.tenant_id = :tenant_id AND j.run_id = :run_id AND j.kind = 'effect') AS effects,
    (SELECT COUNT(*) FROM run_inbox i
     WHERE i.tenant_id = :tenant_id AND i.run_id = :run_id) AS inbox

-- name: delete_run_events
DELETE FROM run_events WHERE tenant_id = :tenant_id AND run_id = :run_id

-- name: delete_run_checkpoints_except
DELETE FROM run_checkpoints
WHERE tenant_id = :tenant_id AND run_id = :run_id AND seq <> :keep_seq

-- name: make_checkpoint_full
UPDATE run_checkpoints SET kind = 'full', payload = :payload
WHERE tenant_id = :tenant_id AND run_id = :run_id AND seq = :seq

-- name: set_run_retained_checkpoint
UPDATE runs
SET full_seq = :seq, full_bytes = :full_bytes, delta_bytes = 0, version = version + 1
WHERE tenant_id = :tenant_id AND run_id = :run_id
  AND status IN ('completed', 'failed', 'cancelled')
  AND NOT EXISTS (
      SELECT 1 FROM run_holds h
      WHERE h.tenant_id = runs.tenant_id AND h.run_id = runs.run_id AND h.released_at IS NULL
  )
RETURNING version

-- name: delete_run_journal_except_effects
DELETE FROM run_journal
WHERE tenant_id = :tenant_id AND run_id = :run_id AND kind <> 'effect'

-- name: clear_run_journal_payloads
UPDATE run_journal SET result = NULL, error = NULL
WHERE tenant_id = :tenant_id AND run_id = :run_id

-- name: delete_run_inbox
DELETE FROM run_inbox WHERE tenant_id = :tenant_id AND run_id = :run_id

-- name: insert_run_retained
INSERT INTO run_retained (tenant_id, run_id, retained_at)
VALUES (:tenant_id, :run_id, :retained_at)
ON CONFLICT (tenant_id, run_id) DO NOTHING

-- name: insert_run_hold
INSERT INTO run_holds (tenant_id, hold_id, run_id, note_digest, created_at, created_by)
VALUES (:tenant_id, :hold_id, :run_id, :note_digest, :created_at, :created_by)

-- name: release_run_holds
UPDATE run_holds SET released_at = :released_at, released_by = :released_by
WHERE tenant_id = :tenant_id AND run_id = :run_id AND released_at IS NULL
RETURNING hold_id

-- name: list_run_holds
SELECT hold_id, run_id, note_digest, created_at, created_by
FROM run_holds
WHERE tenant_id = :tenant_id AND released_at IS NULL
ORDER BY created_at, hold_id
LIMIT :limit

-- name: insert_operator_note
INSERT INTO operator_notes (tenant_id, digest, text, created_at, created_by)
VALUES (:tenant_id, :digest, :text, :created_at, :created_by)
ON CONFLICT (tenant_id, digest) DO NOTHING

-- name: get_operator_note
SELECT text FROM operator_notes WHERE tenant_id = :tenant_id AND digest = :digest

-- name: delete_operator_note
DELETE FROM operator_notes WHERE tenant_id = :tenant_id AND digest = :digest
RETURNING digest

-- name: ensure_housekeeping_row
INSERT INTO housekeeping_leases (tenant_id, next_due_at)
VALUES (:tenant_id, :next_due_at)
ON CONFLICT (tenant_id) DO NOTHING

-- name: acquire_housekeeping_lease
UPDATE housekeeping_leases
SET owner = :owner, lease_expires_at = :lease_expires_at
WHERE tenant_id = :tenant_id
  AND (owner IS NULL OR lease_expires_at <= :now)
  AND (next_due_at <= :now OR :force = 1)
RETURNING tenant_id

-- name: finish_housekeeping_lease
UPDATE housekeeping_leases
SET owner = NULL, lease_expires_at = NULL, last_pass_at = :now, next_due_at = :next_due_at
WHERE tenant_id = :tenant_id AND owner = :owner
RETURNING tenant_id

-- name: release_housekeeping_lease
UPDATE housekeeping_leases SET owner = NULL, lease_expires_at = NULL
WHERE tenant_id = :tenant_id AND owner = :owner

-- name: max_inbox_seq
SELECT COALESCE(MAX(seq), 0) AS seq FROM run_inbox
WHERE tenant_id = :tenant_id AND run_id = :run_id

-- name: insert_inbox_message
INSERT INTO run_inbox (tenant_id, run_id, seq, message_id, message, sent_at, sent_by)
VALUES (:tenant_id, :run_id, :seq, :message_id, :message, :sent_at, :sent_by)

-- name: list_inbox_messages
SELECT seq, message_id, message, sent_at, sent_by FROM run_inbox
WHERE tenant_id = :tenant_id AND run_id = :run_id AND seq > :after_seq
ORDER BY seq
LIMIT :limit

-- name: list_journal_step
SELECT result FROM run_journal
WHERE tenant_id = :tenant_id AND run_id = :run_id AND kind = 'step' AND name = :name
  AND status = 'done'

-- name: insert_webhook_prefix
INSERT INTO webhook_allowlist (tenant_id, prefix, created_at, created_by)
VALUES (:tenant_id, :prefix, :created_at, :created_by)
ON CONFLICT (tenant_id, prefix) DO NOTHING

-- name: delete_webhook_prefix
DELETE FROM webhook_allowlist WHERE tenant_id = :tenant_id AND prefix = :prefix
RETURNING prefix

-- name: list_webhook_prefixes
SELECT prefix FROM webhook_allowlist WHERE tenant_id = :tenant_id ORDER BY prefix

-- name: insert_webhook_endpoint
INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, created_at, created_by)
VALUES (:tenant_id, :endpoint_id, :url, :events, :created_at, :created_by)

-- name: remove_webhook_endpoint
UPDATE webhook_endpoints SET removed_at = :removed_at
WHERE tenant_id = :tenant_id AND endpoint_id = :endpoint_id AND removed_at IS NULL
RETURNING endpoint_id

-- name: list_webhook_endpoints
SELECT endpoint_id, url, events, created_at, created_by FROM webhook_endpoints
WHERE tenant_id = :tenant_id AND removed_at IS NULL
ORDER BY created_at, endpoint_id

-- name: get_webhook_endpoint
SELECT endpoint_id, url, events, created_at, created_by FROM webhook_endpoints
WHERE tenant_id = :tenant_id AND endpoint_id = :endpoint_id AND removed_at IS NULL

-- name: insert_webhook_delivery
INSERT INTO webhook_deliveries (
    tenant_id, delivery_id, endpoint_id, event_key, event, payload, status, attempts,
    next_attempt_at, created_at
)
VALUES (
    :tenant_id, :delivery_id, :endpoint_id, :event_key, :event, :payload, 'pending', 0,
    :next_attempt_at, :created_at
)
ON CONFLICT (tenant_id, endpoint_id, event_key) DO NOTHING
RETURNING delivery_id

-- name: find_due_webhook_deliveries
SELECT tenant_id, delivery_id FROM webhook_deliveries
WHERE status = 'pending' AND next_attempt_at <= :now
ORDER BY next_attempt_at
LIMIT :limit

-- name: get_webhook_delivery
SELECT * FROM webhook_deliveries WHERE tenant_id = :tenant_id AND delivery_id = :delivery_id

-- name: update_webhook_delivery
UPDATE webhook_deliveries
SET status = :status, attempts = :attempts, next_attempt_at = :next_attempt_at,
    last_error = :last_error, delivered_at = :delivered_at
WHERE tenant_id = :tenant_id AND delivery_id = :delivery_id AND attempts = :expected_attempts
RETURNING delivery_id

-- name: list_webhook_deliveries
SELECT * FROM webhook_deliveries
WHERE tenant_id = :tenant_id AND (:status = '' OR status = :status)
ORDER BY created_at DESC, delivery_id DESC
LIMIT :limit

-- name: get_webhook_cursor
SELECT seen_at FROM webhook_cursors WHERE tenant_id = :tenant_id AND source = :source

-- name: set_webhook_cursor
INSERT INTO webhook_cursors (tenant_id, source, seen_at)
VALUES (:tenant_id, :source, :seen_at)
ON CONFLICT (tenant_id, source) DO UPDATE SET seen_at = excluded.seen_at

-- name: list_runs_finished_since
SELECT * FROM runs
WHERE tenant_id = :tenant_id AND status IN ('completed', 'failed', 'cancelled')
  AND updated_at >= :since
ORDER BY updated_at, run_id
LIMIT :limit

-- name: list_approvals_since
SELECT * FROM run_waits
WHERE tenant_id = :tenant_id AND kind = 'approval' AND created_at >= :since
ORDER BY created_at, wait_id
LIMIT :limit

-- name: list_approvals_expiring
SELECT * FROM run_waits
WHERE tenant_id = :tenant_id AND kind = 'approval' AND status = 'open'
  AND expires_at > :now AND expires_at <= :until
ORDER BY expires_at, wait_id
LIMIT :limit
