-- Named queries of tenants, principals, the audit log and metadata, the same on SQLite
-- and PostgreSQL.
-- Parameters use :name; the PostgreSQL backend reads them as %(name)s.
-- Every query on a tenant's data filters on tenant_id.

-- name: insert_tenant
INSERT INTO tenants (tenant_id, name, created_at, created_by)
VALUES (:tenant_id, :name, :created_at, :created_by);

-- name: get_tenant
SELECT * FROM tenants WHERE tenant_id = :tenant_id;

-- name: list_tenants
SELECT * FROM tenants ORDER BY tenant_id;

-- name: set_audit_head
UPDATE tenants SET audit_seq = :seq, audit_head = :head WHERE tenant_id = :tenant_id;

-- name: insert_audit_entry
INSERT INTO audit_log (tenant_id, seq, entry_id, at, actor_id, action, target, details,
                       subjects, prev_hash, entry_hash)
VALUES (:tenant_id, :seq, :entry_id, :at, :actor_id, :action, :target, :details,
        :subjects, :prev_hash, :entry_hash);

-- name: list_audit_entries
SELECT * FROM audit_log
WHERE tenant_id = :tenant_id AND seq > :after_seq
ORDER BY seq
LIMIT :limit;

-- name: list_audit_latest
-- The trail newest first below before_seq, of one action and/or actor when given.
SELECT * FROM audit_log
WHERE tenant_id = :tenant_id AND seq < :before_seq
  AND (CAST(:action AS TEXT) IS NULL OR action = :action)
  AND (CAST(:actor_id AS TEXT) IS NULL OR actor_id = :actor_id)
ORDER BY seq DESC
LIMIT :limit;

-- name: list_audit_latest_of_target
-- The entries about one object (run:<id>, memory:<id>…), newest first: audit_log_by_target.
SELECT * FROM audit_log
WHERE tenant_id = :tenant_id AND target = :target AND seq < :before_seq
  AND (CAST(:action AS TEXT) IS NULL OR action = :action)
  AND (CAST(:actor_id AS TEXT) IS NULL OR actor_id = :actor_id)
ORDER BY seq DESC
LIMIT :limit;

-- name: list_audit_latest_of_actor
-- One principal's entries newest first: audit_log_by_actor.
SELECT * FROM audit_log
WHERE tenant_id = :tenant_id AND actor_id = :actor_id AND seq < :before_seq
  AND (CAST(:action AS TEXT) IS NULL OR action = :action)
ORDER BY seq DESC
LIMIT :limit;

-- name: upsert_principal
INSERT INTO principals (tenant_id, principal_id, roles, created_at, created_by,
                        updated_at, updated_by)
VALUES (:tenant_id, :principal_id, :roles, :created_at, :created_by, :updated_at, :updated_by)
ON CONFLICT (tenant_id, principal_id) DO UPDATE
SET roles = excluded.roles, updated_at = excluded.updated_at, updated_by = excluded.updated_by;

-- name: get_principal
SELECT * FROM principals WHERE tenant_id = :tenant_id AND principal_id = :principal_id;

-- name: list_principals
SELECT * FROM principals WHERE tenant_id = :tenant_id ORDER BY principal_id;

-- name: get_meta
SELECT value FROM tether_meta WHERE key = :key;

-- name: insert_api_key
INSERT INTO api_keys (tenant_id, key_id, principal_id, roles, name, secret_hash, hash_key_id,
                      created_at, created_by, expires_at)
VALUES (:tenant_id, :key_id, :principal_id, :roles, :name, :secret_hash, :hash_key_id,
        :created_at, :created_by, :expires_at);

-- name: get_api_key
SELECT * FROM api_keys WHERE tenant_id = :tenant_id AND key_id = :key_id;

-- name: list_api_keys
SELECT * FROM api_keys WHERE tenant_id = :tenant_id ORDER BY created_at, key_id;

-- name: revoke_api_key
UPDATE api_keys SET revoked_at = :revoked_at, revoked_by = :revoked_by
WHERE tenant_id = :tenant_id AND key_id = :key_id AND revoked_at IS NULL
RETURNING key_id;
