-- Named queries of tenants, principals, the audit log and metadata (PostgreSQL) where its
-- SQL differs from storage/queries/core.sql, or that only PostgreSQL has. Parameters use
-- %(name)s.
-- Every query on a tenant's data filters on tenant_id; row-level security checks it again.

-- name: lock_audit_head
SELECT audit_seq, audit_head FROM tenants WHERE tenant_id = %(tenant_id)s FOR NO KEY UPDATE;
