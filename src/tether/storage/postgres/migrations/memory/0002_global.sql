-- memory 0002: global memory lives in the reserved tenant '_global' (no real tenant id can
-- start with '_'). Every tenant may read its records and vectors (recall with scope
-- global); only the policies of 0001 admit writes, so a tenant's transaction can never
-- change or erase them: they are written in a transaction of the reserved tenant.

INSERT INTO tenants (tenant_id, name, created_at, created_by)
VALUES ('_global', 'global memory', now(), 'system')
ON CONFLICT (tenant_id) DO NOTHING;

CREATE POLICY global_read ON memories FOR SELECT TO tether_app
    USING (tenant_id = '_global');
CREATE POLICY global_read ON memory_vectors FOR SELECT TO tether_app
    USING (tenant_id = '_global');
