-- procedures 0001: published versions of a tenant's skills and policies (documents as
-- canonical JSON, keyed by their content hash) and the version in force.

CREATE TABLE procedure_versions (
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    version      text NOT NULL,
    documents    text NOT NULL,
    source       text NOT NULL,
    published_at timestamptz NOT NULL,
    published_by text NOT NULL,
    PRIMARY KEY (tenant_id, version)
);

CREATE TABLE procedure_current (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    version    text NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by text NOT NULL,
    PRIMARY KEY (tenant_id),
    FOREIGN KEY (tenant_id, version) REFERENCES procedure_versions (tenant_id, version)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON procedure_versions, procedure_current
    TO tether_app, tether_system;

ALTER TABLE procedure_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE procedure_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON procedure_versions TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON procedure_versions TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE procedure_current ENABLE ROW LEVEL SECURITY;
ALTER TABLE procedure_current FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON procedure_current TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON procedure_current TO tether_system USING (true) WITH CHECK (true);
