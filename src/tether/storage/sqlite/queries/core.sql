-- Named queries of tenants, principals, the audit log and metadata (SQLite) where its SQL
-- differs from storage/queries/core.sql, or that only SQLite has. Parameters use :name.
-- Every query on a tenant's data filters on tenant_id.

-- name: lock_audit_head
SELECT audit_seq, audit_head FROM tenants WHERE tenant_id = :tenant_id;
