-- The current PostgreSQL schema, maintained by hand beside the migrations.
-- tests/conformance/test_migrations.py checks that migrating an empty database
-- gives exactly this schema.


DO $$
BEGIN
    CREATE ROLE tether_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

DO $$
BEGIN
    CREATE ROLE tether_system NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

CREATE TABLE IF NOT EXISTS tether_schema_versions (
    component  text NOT NULL,
    version    integer NOT NULL,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL,
    PRIMARY KEY (component, version)
);

GRANT SELECT ON tether_schema_versions TO tether_app, tether_system;


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

INSERT INTO tether_schema_versions (component, version, name, applied_at)
VALUES ('core', 1, 'initial', now());
