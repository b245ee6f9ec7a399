-- Named queries of conversation threads, the same on SQLite and PostgreSQL.
-- Parameters use :name; the PostgreSQL backend reads them as %(name)s.

-- name: insert_thread
INSERT INTO threads (tenant_id, thread_id, user_id, title, created_at, created_by, updated_at,
                     last_turn_seq, retention_days, expires_at)
VALUES (:tenant_id, :thread_id, :user_id, :title, :created_at, :created_by, :updated_at,
        :last_turn_seq, :retention_days, :expires_at);

-- name: get_thread
SELECT * FROM threads WHERE tenant_id = :tenant_id AND thread_id = :thread_id;

-- name: list_threads
SELECT * FROM threads
WHERE tenant_id = :tenant_id
ORDER BY updated_at DESC, thread_id
LIMIT :limit;

-- name: list_user_threads
SELECT * FROM threads
WHERE tenant_id = :tenant_id AND user_id = :user_id
ORDER BY updated_at DESC, thread_id
LIMIT :limit;

-- name: list_expired_threads
SELECT * FROM threads
WHERE tenant_id = :tenant_id AND expires_at IS NOT NULL AND expires_at <= :now
ORDER BY expires_at, thread_id
LIMIT :limit;

-- name: advance_thread
-- Reserves the next :count sequence numbers inside the caller's transaction (the row is
-- write-locked until it ends), so concurrent appends get distinct, gap-free numbers.
UPDATE threads
SET last_turn_seq = last_turn_seq + :count, updated_at = :updated_at, expires_at = :expires_at
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
RETURNING last_turn_seq;

-- name: insert_thread_turn
INSERT INTO thread_turns (tenant_id, thread_id, seq, turn_id, role, kind, content, tokens, ref,
                          metadata, created_at, created_by)
VALUES (:tenant_id, :thread_id, :seq, :turn_id, :role, :kind, :content, :tokens, :ref,
        :metadata, :created_at, :created_by);

-- name: list_thread_turns
SELECT * FROM thread_turns
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND seq >= :from_seq AND seq <= :to_seq
ORDER BY seq
LIMIT :limit;

-- name: list_thread_turns_before
SELECT * FROM thread_turns
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND seq < :before_seq
ORDER BY seq DESC
LIMIT :limit;

-- name: get_thread_turn
SELECT * FROM thread_turns WHERE tenant_id = :tenant_id AND turn_id = :turn_id;

-- name: list_thread_turns_by_ref
SELECT * FROM thread_turns
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND ref = :ref
ORDER BY seq;

-- name: insert_thread_summary
INSERT INTO thread_summaries (tenant_id, thread_id, summary_id, from_seq, to_seq, text, tokens,
                              dropped_refs, summarizer, created_at, created_by)
VALUES (:tenant_id, :thread_id, :summary_id, :from_seq, :to_seq, :text, :tokens,
        :dropped_refs, :summarizer, :created_at, :created_by);

-- name: list_thread_summaries
SELECT * FROM thread_summaries
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
ORDER BY to_seq, created_at, summary_id;

-- name: latest_thread_summary
SELECT * FROM thread_summaries
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
ORDER BY to_seq DESC, created_at DESC, summary_id DESC
LIMIT 1;

-- name: delete_thread_summaries
DELETE FROM thread_summaries
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
RETURNING summary_id;

-- name: delete_thread_turns
DELETE FROM thread_turns
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
RETURNING seq;

-- name: delete_thread
DELETE FROM threads
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
RETURNING thread_id;
