-- Named queries of procedures (PostgreSQL). Parameters use %(name)s.

-- name: insert_procedure_version
INSERT INTO procedure_versions (tenant_id, version, documents, source, published_at, published_by)
VALUES (%(tenant_id)s, %(version)s, %(documents)s, %(source)s, %(published_at)s, %(published_by)s)
ON CONFLICT (tenant_id, version) DO NOTHING;

-- name: get_procedure_version
SELECT * FROM procedure_versions WHERE tenant_id = %(tenant_id)s AND version = %(version)s;

-- name: list_procedure_versions
SELECT * FROM procedure_versions
WHERE tenant_id = %(tenant_id)s
ORDER BY published_at DESC, version
LIMIT %(limit)s;

-- name: get_current_procedures
SELECT * FROM procedure_current WHERE tenant_id = %(tenant_id)s;

-- name: set_current_procedures
INSERT INTO procedure_current (tenant_id, version, updated_at, updated_by)
VALUES (%(tenant_id)s, %(version)s, %(updated_at)s, %(updated_by)s)
ON CONFLICT (tenant_id) DO UPDATE
SET version = excluded.version, updated_at = excluded.updated_at, updated_by = excluded.updated_by;
