-- memory 0006: a counter per (tenant, scope), named by its scope token (a digest: no
-- user id is kept in the clear), bumped by every write of the scope's vectors,
-- so a process's cached copy of a scope's vectors notices another process's writes.
CREATE TABLE memory_scope_versions (
    tenant_id  text NOT NULL,
    scope_token  text NOT NULL,
    version    bigint NOT NULL,
    PRIMARY KEY (tenant_id, scope_token)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON memory_scope_versions TO tether_app, tether_system;

ALTER TABLE memory_scope_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_scope_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_scope_versions TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_scope_versions TO tether_system
    USING (true) WITH CHECK (true);
CREATE POLICY global_read ON memory_scope_versions FOR SELECT TO tether_app
    USING (tenant_id = '_global');
