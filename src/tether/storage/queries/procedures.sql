-- Named queries of procedures, the same on SQLite and PostgreSQL.
-- Parameters use :name; the PostgreSQL backend reads them as %(name)s.

-- name: insert_procedure_version
INSERT INTO procedure_versions (tenant_id, version, documents, source, published_at, published_by)
VALUES (:tenant_id, :version, :documents, :source, :published_at, :published_by)
ON CONFLICT (tenant_id, version) DO NOTHING;

-- name: get_procedure_version
SELECT * FROM procedure_versions WHERE tenant_id = :tenant_id AND version = :version;

-- name: list_procedure_versions
SELECT * FROM procedure_versions
WHERE tenant_id = :tenant_id
ORDER BY published_at DESC, version
LIMIT :limit;

-- name: get_current_procedures
SELECT * FROM procedure_current WHERE tenant_id = :tenant_id;

-- name: set_current_procedures
INSERT INTO procedure_current (tenant_id, version, updated_at, updated_by)
VALUES (:tenant_id, :version, :updated_at, :updated_by)
ON CONFLICT (tenant_id) DO UPDATE
SET version = excluded.version, updated_at = excluded.updated_at, updated_by = excluded.updated_by;
