-- core 0004: API keys of the HTTP API. Each key belongs to a tenant and a principal and
-- carries roles (at most the principal's); the secret is stored only as an HMAC under the
-- api-key-hash key derived from the master key (hash_key_id names the master that made
-- it), so a copy of the database opens no door. A key is looked up inside its own tenant
-- (the tenant is part of the key), so row-level security confines it like every tenant
-- table; revoking sets revoked_at, nothing is deleted.

CREATE TABLE api_keys (
    tenant_id    text NOT NULL,
    key_id       text NOT NULL,
    principal_id text NOT NULL,
    roles        text NOT NULL,
    name         text NOT NULL,
    secret_hash  text NOT NULL,
    hash_key_id  text NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text NOT NULL,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    revoked_by   text,
    PRIMARY KEY (tenant_id, key_id),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, principal_id)
);

GRANT SELECT, INSERT, UPDATE (revoked_at, revoked_by) ON api_keys TO tether_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON api_keys TO tether_system;

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON api_keys TO tether_system USING (true) WITH CHECK (true);
