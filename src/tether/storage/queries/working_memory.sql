-- Named queries of working memory, the same on SQLite and PostgreSQL.
-- Parameters use :name; the PostgreSQL backend reads them as %(name)s.
-- An entry whose expires_at is at or before :now is expired: reads never return it.

-- name: upsert_working_entry
INSERT INTO working_memory (tenant_id, session_id, key, value, expires_at, updated_at)
VALUES (:tenant_id, :session_id, :key, :value, :expires_at, :now)
ON CONFLICT (tenant_id, session_id, key)
DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at,
              updated_at = excluded.updated_at;

-- name: get_working_entry
SELECT key, value, expires_at FROM working_memory
WHERE tenant_id = :tenant_id AND session_id = :session_id AND key = :key
  AND (expires_at IS NULL OR expires_at > :now);

-- name: list_working_entries
SELECT key, value, expires_at FROM working_memory
WHERE tenant_id = :tenant_id AND session_id = :session_id
  AND (expires_at IS NULL OR expires_at > :now)
ORDER BY key;

-- name: touch_working_entry
UPDATE working_memory SET expires_at = :expires_at, updated_at = :now
WHERE tenant_id = :tenant_id AND session_id = :session_id AND key = :key
  AND (expires_at IS NULL OR expires_at > :now)
RETURNING key;

-- name: delete_working_entry
DELETE FROM working_memory
WHERE tenant_id = :tenant_id AND session_id = :session_id AND key = :key
RETURNING expires_at;

-- name: delete_working_session
DELETE FROM working_memory
WHERE tenant_id = :tenant_id AND session_id = :session_id
RETURNING expires_at;

-- name: purge_expired_working_entries
DELETE FROM working_memory
WHERE expires_at IS NOT NULL AND expires_at <= :now
RETURNING tenant_id;

-- name: purge_expired_working_entries_of
DELETE FROM working_memory
WHERE tenant_id = :tenant_id AND expires_at IS NOT NULL AND expires_at <= :now
RETURNING tenant_id;
