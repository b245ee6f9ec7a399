-- core 0001: tenants, principals, the audit trail and database metadata.
-- The application works as tether_app, confined by row-level security to the tenant set
-- with set_config('tether.tenant_id', …, true) in each transaction; tether_system is for
-- cross-tenant maintenance only.

CREATE TABLE tether_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE tenants (
    tenant_id  text PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,
    audit_seq  bigint NOT NULL DEFAULT 0,
    audit_head text NOT NULL DEFAULT ''
);

CREATE TABLE principals (
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    principal_id text NOT NULL,
    roles        text NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text NOT NULL,
    updated_at   timestamptz NOT NULL,
    updated_by   text NOT NULL,
    PRIMARY KEY (tenant_id, principal_id)
);

CREATE TABLE audit_log (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    seq        bigint NOT NULL,
    entry_id   uuid NOT NULL,
    at         timestamptz NOT NULL,
    actor_id   text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL,
    details    text NOT NULL,
    subjects   text NOT NULL,
    prev_hash  text NOT NULL,
    entry_hash text NOT NULL,
    PRIMARY KEY (tenant_id, seq)
);

CREATE INDEX audit_log_by_action ON audit_log (tenant_id, action, seq);

CREATE FUNCTION tether_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION tether_audit_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION tether_audit_append_only();

GRANT SELECT ON tether_meta TO tether_app;
GRANT SELECT, INSERT ON tether_meta TO tether_system;
GRANT SELECT, UPDATE (audit_seq, audit_head) ON tenants TO tether_app;
GRANT SELECT, INSERT, UPDATE ON tenants TO tether_system;
GRANT SELECT, INSERT, UPDATE ON principals TO tether_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON principals TO tether_system;
GRANT SELECT, INSERT ON audit_log TO tether_app, tether_system;

ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON tenants TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE principals ENABLE ROW LEVEL SECURITY;
ALTER TABLE principals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON principals TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON principals TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_log FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_log TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON audit_log TO tether_system USING (true) WITH CHECK (true);
