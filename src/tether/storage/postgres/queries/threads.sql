-- Named queries of conversation threads (PostgreSQL). Parameters use %(name)s.

-- name: insert_thread
INSERT INTO threads (tenant_id, thread_id, user_id, title, created_at, created_by, updated_at,
                     last_turn_seq, retention_days, expires_at)
VALUES (%(tenant_id)s, %(thread_id)s, %(user_id)s, %(title)s, %(created_at)s, %(created_by)s, %(updated_at)s,
        %(last_turn_seq)s, %(retention_days)s, %(expires_at)s);

-- name: get_thread
SELECT * FROM threads WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s;

-- name: list_threads
SELECT * FROM threads
WHERE tenant_id = %(tenant_id)s
ORDER BY updated_at DESC, thread_id
LIMIT %(limit)s;

-- name: list_user_threads
SELECT * FROM threads
WHERE tenant_id = %(tenant_id)s AND user_id = %(user_id)s
ORDER BY updated_at DESC, thread_id
LIMIT %(limit)s;

-- name: list_expired_threads
SELECT * FROM threads
WHERE tenant_id = %(tenant_id)s AND expires_at IS NOT NULL AND expires_at <= %(now)s
ORDER BY expires_at, thread_id
LIMIT %(limit)s;

-- name: advance_thread
-- Reserves the next %(count)s sequence numbers inside the caller's transaction (the row is
-- write-locked until it ends), so concurrent appends get distinct, gap-free numbers.
UPDATE threads
SET last_turn_seq = last_turn_seq + %(count)s, updated_at = %(updated_at)s, expires_at = %(expires_at)s
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
RETURNING last_turn_seq;

-- name: insert_thread_turn
INSERT INTO thread_turns (tenant_id, thread_id, seq, turn_id, role, kind, content, tokens, ref,
                          metadata, created_at, created_by)
VALUES (%(tenant_id)s, %(thread_id)s, %(seq)s, %(turn_id)s, %(role)s, %(kind)s, %(content)s, %(tokens)s, %(ref)s,
        %(metadata)s, %(created_at)s, %(created_by)s);

-- name: list_thread_turns
SELECT * FROM thread_turns
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s AND seq >= %(from_seq)s AND seq <= %(to_seq)s
ORDER BY seq
LIMIT %(limit)s;

-- name: list_thread_turns_before
SELECT * FROM thread_turns
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s AND seq < %(before_seq)s
ORDER BY seq DESC
LIMIT %(limit)s;

-- name: get_thread_turn
SELECT * FROM thread_turns WHERE tenant_id = %(tenant_id)s AND turn_id = %(turn_id)s;

-- name: list_thread_turns_by_ref
SELECT * FROM thread_turns
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s AND ref = %(ref)s
ORDER BY seq;

-- name: insert_thread_summary
INSERT INTO thread_summaries (tenant_id, thread_id, summary_id, from_seq, to_seq, text, tokens,
                              dropped_refs, summarizer, created_at, created_by)
VALUES (%(tenant_id)s, %(thread_id)s, %(summary_id)s, %(from_seq)s, %(to_seq)s, %(text)s, %(tokens)s,
        %(dropped_refs)s, %(summarizer)s, %(created_at)s, %(created_by)s);

-- name: list_thread_summaries
SELECT * FROM thread_summaries
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
ORDER BY to_seq, created_at, summary_id;

-- name: latest_thread_summary
SELECT * FROM thread_summaries
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
ORDER BY to_seq DESC, created_at DESC, summary_id DESC
LIMIT 1;

-- name: delete_thread_summaries
DELETE FROM thread_summaries
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
RETURNING summary_id;

-- name: delete_thread_turns
DELETE FROM thread_turns
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
RETURNING seq;

-- name: delete_thread
DELETE FROM threads
WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
RETURNING thread_id;
