-- memory 0001: governed memory records, their full-text index and vectors, the policy's
-- decision log, the recall log, consents, legal holds and erasure tombstones.

CREATE TABLE memories (
    tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
    memory_id      text NOT NULL,
    scope          text NOT NULL,
    scope_id       text NOT NULL,
    subjects       text NOT NULL,
    kind           text NOT NULL,
    fact_key       text,
    text           text NOT NULL,
    tags           text NOT NULL,
    source_type    text NOT NULL,
    source_ref     text,
    source_version text,
    created_by     text NOT NULL,
    approved_by    text,
    confidence     double precision NOT NULL,
    sensitivity    text NOT NULL,
    valid_from     timestamptz NOT NULL,
    valid_to       timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    expires_at     timestamptz,
    supersedes     text,
    superseded_by  text,
    superseded_at  timestamptz,
    access_count   integer NOT NULL DEFAULT 0,
    last_access    timestamptz,
    status         text NOT NULL,
    purge_after    timestamptz,
    tsv            tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
    PRIMARY KEY (tenant_id, memory_id)
);

CREATE INDEX memories_by_scope ON memories (tenant_id, scope, scope_id, status);
CREATE INDEX memories_by_fact_key ON memories (tenant_id, scope, scope_id, fact_key);
CREATE INDEX memories_by_kind ON memories (tenant_id, kind, status, scope, scope_id);
CREATE INDEX memories_fts ON memories USING gin (tsv);
CREATE INDEX memories_by_source ON memories (tenant_id, source_ref, source_version);


CREATE TABLE memory_subjects (
    tenant_id  text NOT NULL,
    subject_id text NOT NULL,
    memory_id  text NOT NULL,
    PRIMARY KEY (tenant_id, subject_id, memory_id)
);

CREATE TABLE memory_vectors (
    tenant_id   text NOT NULL,
    memory_id   text NOT NULL,
    embedder_id text NOT NULL,
    dim         integer NOT NULL,
    vector      bytea NOT NULL,
    PRIMARY KEY (tenant_id, memory_id, embedder_id)
);

CREATE TABLE memory_decisions (
    tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
    decision_id   text NOT NULL,
    at            timestamptz NOT NULL,
    principal_id  text NOT NULL,
    verdict       text NOT NULL,
    reasons       text NOT NULL,
    findings      text NOT NULL,
    text_digest   text NOT NULL,
    subject_hashes text NOT NULL,
    memory_id     text,
    run_id        text,
    PRIMARY KEY (tenant_id, decision_id)
);

CREATE TABLE memory_recalls (
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    recall_id    text NOT NULL,
    at           timestamptz NOT NULL,
    principal_id text NOT NULL,
    query_digest text NOT NULL,
    scopes       text NOT NULL,
    returned     text NOT NULL,
    PRIMARY KEY (tenant_id, recall_id)
);

CREATE TABLE memory_consents (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    user_id    text NOT NULL,
    purpose    text NOT NULL,
    granted_at timestamptz NOT NULL,
    revoked_at timestamptz,
    PRIMARY KEY (tenant_id, user_id, purpose)
);

CREATE TABLE memory_holds (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    hold_id    text NOT NULL,
    scope      text NOT NULL,
    scope_id   text NOT NULL,
    reason     text NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,
    released_at timestamptz,
    PRIMARY KEY (tenant_id, hold_id)
);

CREATE TABLE memory_policies (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    config     text NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by text NOT NULL,
    PRIMARY KEY (tenant_id)
);

CREATE TABLE memory_tombstones (
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    tombstone_id text NOT NULL,
    subject_hash text NOT NULL,
    erased_at    timestamptz NOT NULL,
    erased_by    text NOT NULL,
    counts       text NOT NULL,
    PRIMARY KEY (tenant_id, tombstone_id)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON memories, memory_subjects, memory_vectors, memory_decisions, memory_recalls, memory_consents, memory_holds, memory_tombstones,
    memory_policies
    TO tether_app, tether_system;

ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memories TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memories TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_subjects ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_subjects FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_subjects TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_subjects TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_vectors ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_vectors FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_vectors TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_vectors TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_decisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_decisions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_decisions TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_decisions TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_recalls ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_recalls FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_recalls TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_recalls TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_consents ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_consents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_consents TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_consents TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_holds ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_holds FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_holds TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_holds TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_tombstones FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_tombstones TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_tombstones TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_policies TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_policies TO tether_system USING (true) WITH CHECK (true);
