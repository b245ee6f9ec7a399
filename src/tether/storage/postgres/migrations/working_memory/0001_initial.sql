-- working_memory 0001: session-scoped key/value state with an optional expiry. An entry
-- past its expiry is invisible at once and deleted by the purge.

CREATE TABLE working_memory (
    tenant_id  text NOT NULL,
    session_id text NOT NULL,
    key        text NOT NULL,
    value      text NOT NULL,
    expires_at timestamptz,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_id, key)
);

CREATE INDEX working_memory_by_expiry ON working_memory (expires_at)
    WHERE expires_at IS NOT NULL;

GRANT SELECT, INSERT, UPDATE, DELETE ON working_memory TO tether_app, tether_system;

ALTER TABLE working_memory ENABLE ROW LEVEL SECURITY;
ALTER TABLE working_memory FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON working_memory TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON working_memory TO tether_system USING (true) WITH CHECK (true);
