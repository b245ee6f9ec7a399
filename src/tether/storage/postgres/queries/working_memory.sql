-- Named queries of working memory (PostgreSQL). Parameters use %(name)s.
-- An entry whose expires_at is at or before %(now)s is expired: reads never return it.

-- name: upsert_working_entry
INSERT INTO working_memory (tenant_id, session_id, key, value, expires_at, updated_at)
VALUES (%(tenant_id)s, %(session_id)s, %(key)s, %(value)s, %(expires_at)s, %(now)s)
ON CONFLICT (tenant_id, session_id, key)
DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at,
              updated_at = excluded.updated_at;

-- name: get_working_entry
SELECT key, value, expires_at FROM working_memory
WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND key = %(key)s
  AND (expires_at IS NULL OR expires_at > %(now)s);

-- name: list_working_entries
SELECT key, value, expires_at FROM working_memory
WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
  AND (expires_at IS NULL OR expires_at > %(now)s)
ORDER BY key;

-- name: touch_working_entry
UPDATE working_memory SET expires_at = %(expires_at)s, updated_at = %(now)s
WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND key = %(key)s
  AND (expires_at IS NULL OR expires_at > %(now)s)
RETURNING key;

-- name: delete_working_entry
DELETE FROM working_memory
WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND key = %(key)s
RETURNING expires_at;

-- name: delete_working_session
DELETE FROM working_memory
WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
RETURNING expires_at;

-- name: purge_expired_working_entries
DELETE FROM working_memory
WHERE expires_at IS NOT NULL AND expires_at <= %(now)s
RETURNING tenant_id;
