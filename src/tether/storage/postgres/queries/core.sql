-- Named queries for the PostgreSQL backend. Parameters use %(name)s.
-- Every query on a tenant's data filters on tenant_id; row-level security checks it again.

-- name: insert_tenant
INSERT INTO tenants (tenant_id, name, created_at, created_by)
VALUES (%(tenant_id)s, %(name)s, %(created_at)s, %(created_by)s);

-- name: get_tenant
SELECT * FROM tenants WHERE tenant_id = %(tenant_id)s;

-- name: list_tenants
SELECT * FROM tenants ORDER BY tenant_id;

-- name: lock_audit_head
SELECT audit_seq, audit_head FROM tenants WHERE tenant_id = %(tenant_id)s FOR UPDATE;

-- name: set_audit_head
UPDATE tenants SET audit_seq = %(seq)s, audit_head = %(head)s WHERE tenant_id = %(tenant_id)s;

-- name: insert_audit_entry
INSERT INTO audit_log (tenant_id, seq, entry_id, at, actor_id, action, target, details,
                       subjects, prev_hash, entry_hash)
VALUES (%(tenant_id)s, %(seq)s, %(entry_id)s, %(at)s, %(actor_id)s, %(action)s, %(target)s,
        %(details)s, %(subjects)s, %(prev_hash)s, %(entry_hash)s);

-- name: list_audit_entries
SELECT * FROM audit_log
WHERE tenant_id = %(tenant_id)s AND seq > %(after_seq)s
ORDER BY seq
LIMIT %(limit)s;

-- name: upsert_principal
INSERT INTO principals (tenant_id, principal_id, roles, created_at, created_by,
                        updated_at, updated_by)
VALUES (%(tenant_id)s, %(principal_id)s, %(roles)s, %(created_at)s, %(created_by)s,
        %(updated_at)s, %(updated_by)s)
ON CONFLICT (tenant_id, principal_id) DO UPDATE
SET roles = excluded.roles, updated_at = excluded.updated_at, updated_by = excluded.updated_by;

-- name: get_principal
SELECT * FROM principals
WHERE tenant_id = %(tenant_id)s AND principal_id = %(principal_id)s;

-- name: list_principals
SELECT * FROM principals WHERE tenant_id = %(tenant_id)s ORDER BY principal_id;

-- name: get_meta
SELECT value FROM tether_meta WHERE key = %(key)s;

-- name: insert_meta
INSERT INTO tether_meta (key, value) VALUES (%(key)s, %(value)s)
ON CONFLICT (key) DO NOTHING;
