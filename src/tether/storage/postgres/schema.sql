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

-- Only its owner reads tether_secrets; tether_enter() checks a transaction's signed
-- tenant against it and binds it to that transaction (see core 0002 and 0003).
CREATE TABLE tether_secrets (
    purpose   text PRIMARY KEY,
    inner_pad bytea NOT NULL,
    outer_pad bytea NOT NULL
);

REVOKE ALL ON tether_secrets FROM PUBLIC;

CREATE FUNCTION tether_session_start() RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
BEGIN
    CREATE TEMP SEQUENCE IF NOT EXISTS tether_nonces AS bigint MINVALUE 0 START 0;
    IF (SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('pg_temp.tether_nonces'))
       IS DISTINCT FROM current_user::regrole::oid THEN
        RAISE EXCEPTION 'the session''s tether_nonces sequence is not Tether''s'
            USING ERRCODE = 'TT003';
    END IF;
END $$;

CREATE FUNCTION tether_enter(claimed text, nonce bigint, sig text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
    inner_key bytea;
    outer_key bytea;
    bound     text;
BEGIN
    IF (SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('pg_temp.tether_nonces'))
       IS DISTINCT FROM current_user::regrole::oid THEN
        RAISE EXCEPTION 'no tenant context in this session: call tether_session_start()'
            USING ERRCODE = 'TT003';
    END IF;
    SELECT s.inner_pad, s.outer_pad INTO inner_key, outer_key
    FROM tether_secrets s WHERE s.purpose = 'pg-tenant-context';
    IF encode(sha256(outer_key || sha256(inner_key || convert_to(
           claimed || chr(31) || pg_backend_pid()::text || chr(31) || nonce::text, 'UTF8'))),
           'hex') IS DISTINCT FROM sig
       OR nonce <= (SELECT s.last_value FROM pg_temp.tether_nonces s) THEN
        RETURN false;
    END IF;
    PERFORM setval('pg_temp.tether_nonces', nonce);
    bound := claimed || chr(31) || pg_backend_pid()::text || chr(31)
             || transaction_timestamp()::text;
    PERFORM set_config('tether.tenant_id', claimed, true);
    PERFORM set_config('tether.tenant_proof',
        encode(sha256(outer_key || sha256(inner_key || convert_to(bound, 'UTF8'))), 'hex'),
        true);
    RETURN true;
END $$;

CREATE FUNCTION tether_tenant() RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
DECLARE
    claimed   text := current_setting('tether.tenant_id', true);
    inner_key bytea;
    outer_key bytea;
BEGIN
    SELECT s.inner_pad, s.outer_pad INTO inner_key, outer_key
    FROM tether_secrets s WHERE s.purpose = 'pg-tenant-context';
    IF encode(sha256(outer_key || sha256(inner_key || convert_to(
           claimed || chr(31) || pg_backend_pid()::text || chr(31)
           || transaction_timestamp()::text, 'UTF8'))), 'hex')
       = current_setting('tether.tenant_proof', true) THEN
        RETURN claimed;
    END IF;
    RETURN NULL;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION tether_tenant() SET search_path = pg_catalog, %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION tether_enter(text, bigint, text) '
                   'SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION tether_session_start() '
                   'SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;

REVOKE ALL ON FUNCTION tether_tenant(), tether_session_start(), tether_enter(text, bigint, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tether_session_start(), tether_enter(text, bigint, text)
    TO tether_app, tether_system;
GRANT EXECUTE ON FUNCTION tether_tenant() TO tether_app, tether_system;

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
CREATE INDEX audit_log_by_target ON audit_log (tenant_id, target, seq);
CREATE INDEX audit_log_by_actor ON audit_log (tenant_id, actor_id, seq);

CREATE FUNCTION tether_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION tether_audit_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION tether_audit_append_only();

GRANT SELECT, INSERT ON tether_meta TO tether_system;
GRANT SELECT, UPDATE (audit_seq, audit_head) ON tenants TO tether_app;
GRANT SELECT, INSERT, UPDATE ON tenants TO tether_system;
GRANT SELECT, INSERT, UPDATE ON principals TO tether_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON principals TO tether_system;
GRANT SELECT, INSERT ON audit_log TO tether_app, tether_system;

ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON tenants TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE principals ENABLE ROW LEVEL SECURITY;
ALTER TABLE principals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON principals TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON principals TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_log FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_log TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON audit_log TO tether_system USING (true) WITH CHECK (true);

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

-- runs
CREATE TABLE runs (
    tenant_id        text NOT NULL REFERENCES tenants (tenant_id),
    run_id           text NOT NULL,
    workflow         text NOT NULL,
    workflow_version integer NOT NULL,
    status           text NOT NULL,
    current_node     text NOT NULL,
    state_version    integer NOT NULL,
    checkpoint_seq   bigint NOT NULL,
    full_seq         integer NOT NULL,
    delta_bytes      integer NOT NULL,
    full_bytes       integer NOT NULL,
    event_seq        bigint NOT NULL,
    version          bigint NOT NULL,
    lease_owner      text,
    lease_expires_at timestamptz,
    attempt          integer NOT NULL,
    steps            integer NOT NULL,
    max_steps        integer NOT NULL,
    deadline         timestamptz,
    resume_at        timestamptz,
    wait_id          text,
    cancel_requested boolean NOT NULL DEFAULT false,
    error            text,
    visits           text NOT NULL,
    created_at       timestamptz NOT NULL,
    created_by       text NOT NULL,
    updated_at       timestamptz NOT NULL,
    updated_by       text NOT NULL,
    lease_epoch      bigint NOT NULL DEFAULT 0,
    storage_faults   integer NOT NULL DEFAULT 0,
    priority         integer NOT NULL DEFAULT 0,
    parent_run_id    text,
    parent_wait_id   text,
    child_serial     boolean NOT NULL DEFAULT false,
    cancel_reason    text,
    PRIMARY KEY (tenant_id, run_id)
);

CREATE INDEX runs_by_status ON runs (tenant_id, status, updated_at)
    WHERE status <> 'running';
CREATE INDEX runs_runnable ON runs (status, resume_at) WHERE status = 'scheduled';
CREATE INDEX runs_running ON runs (status, tenant_id, workflow);
CREATE INDEX runs_children ON runs (tenant_id, parent_run_id)
    WHERE parent_run_id IS NOT NULL;

CREATE TABLE run_checkpoints (
    tenant_id     text NOT NULL,
    run_id        text NOT NULL,
    seq           bigint NOT NULL,
    node          text NOT NULL,
    next_node     text NOT NULL,
    kind          text NOT NULL,
    payload       text NOT NULL,
    state_version integer NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE TABLE run_journal (
    tenant_id       text NOT NULL,
    run_id          text NOT NULL,
    node            text NOT NULL,
    visit           integer NOT NULL,
    position        integer NOT NULL,
    name            text NOT NULL,
    kind            text NOT NULL,
    idempotency_key text NOT NULL,
    status          text NOT NULL,
    request_digest  text NOT NULL,
    result          text,
    error           text,
    retry_safe      boolean NOT NULL,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    duration_ms     double precision,
    tokens_in       integer,
    tokens_out      integer,
    cost_usd        double precision,
    wait_id         text,
    PRIMARY KEY (tenant_id, run_id, node, visit, position),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE TABLE run_waits (
    tenant_id     text NOT NULL,
    wait_id       text NOT NULL,
    run_id        text NOT NULL,
    node          text NOT NULL,
    visit         integer NOT NULL,
    position      integer NOT NULL,
    kind          text NOT NULL,
    reason        text NOT NULL,
    status        text NOT NULL,
    message       text NOT NULL,
    request       text NOT NULL,
    action_digest text,
    approver_role text,
    requested_by  text NOT NULL,
    resume_at     timestamptz,
    expires_at    timestamptz,
    created_at    timestamptz NOT NULL,
    resolved_at   timestamptz,
    resolved_by   text,
    resolution    text,
    PRIMARY KEY (tenant_id, wait_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE INDEX run_waits_by_status ON run_waits (tenant_id, kind, status, created_at);
CREATE INDEX run_waits_by_run ON run_waits (tenant_id, run_id);
CREATE INDEX run_waits_expiring ON run_waits (status, expires_at);

CREATE TABLE run_events (
    tenant_id   text NOT NULL,
    run_id      text NOT NULL,
    seq         bigint NOT NULL,
    at          timestamptz NOT NULL,
    type        text NOT NULL,
    node        text,
    duration_ms double precision,
    data        text NOT NULL,
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE FUNCTION tether_step_guard(saved integer, cancel boolean, cancellable boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF saved = 0 THEN
        RAISE EXCEPTION 'the run moved on under another writer' USING ERRCODE = 'TT001';
    END IF;
    IF cancel AND cancellable THEN
        RAISE EXCEPTION 'the run was cancelled' USING ERRCODE = 'TT002';
    END IF;
    RETURN true;
END $$;

GRANT SELECT, INSERT, UPDATE ON runs, run_checkpoints, run_journal, run_waits, run_events
    TO tether_app, tether_system;

ALTER TABLE runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON runs TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON runs TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_checkpoints TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_checkpoints TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_journal ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_journal FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_journal TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_journal TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_waits ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_waits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_waits TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_waits TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_events TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_events TO tether_system USING (true) WITH CHECK (true);

CREATE TABLE run_limits (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    max_running integer NOT NULL,
    updated_at  timestamptz NOT NULL,
    updated_by  text NOT NULL,
    PRIMARY KEY (tenant_id)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON run_limits TO tether_app, tether_system;

ALTER TABLE run_limits ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_limits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_limits TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_limits TO tether_system USING (true) WITH CHECK (true);

CREATE FUNCTION tether_runs_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tether_runs', '');
    RETURN NULL;
END $$;

CREATE TRIGGER runs_wake_on_insert AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.status IN ('queued', 'scheduled'))
    EXECUTE FUNCTION tether_runs_notify();

CREATE TRIGGER runs_wake_on_update AFTER UPDATE OF status, resume_at ON runs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       AND (NEW.status IN ('queued', 'scheduled') OR OLD.status = 'running'))
    EXECUTE FUNCTION tether_runs_notify();

-- memory
-- Snowball's English stemmer with no stop-word list: the index keeps every word, as
-- SQLite's does, and recall's own list decides which words a query is made of (memory 0010).
CREATE TEXT SEARCH DICTIONARY tether_english_stem (TEMPLATE = snowball, LANGUAGE = english);
CREATE TEXT SEARCH CONFIGURATION tether_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION tether_english
    ALTER MAPPING REPLACE english_stem WITH tether_english_stem;

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
    tsv            tsvector NOT NULL,
    index_context  text,
    episode        text,
    contradicted_at timestamptz,
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
    part        integer NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, memory_id, embedder_id, part)
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
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memories TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_subjects ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_subjects FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_subjects TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_subjects TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_vectors ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_vectors FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_vectors TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_vectors TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_decisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_decisions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_decisions TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_decisions TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_recalls ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_recalls FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_recalls TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_recalls TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_consents ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_consents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_consents TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_consents TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_holds ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_holds FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_holds TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_holds TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_tombstones FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_tombstones TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_tombstones TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE memory_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_policies TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_policies TO tether_system USING (true) WITH CHECK (true);

-- memory 0002: the reserved tenant of global memory, readable by every tenant.
INSERT INTO tenants (tenant_id, name, created_at, created_by)
VALUES ('_global', 'global memory', now(), 'system')
ON CONFLICT (tenant_id) DO NOTHING;
CREATE POLICY global_read ON memories FOR SELECT TO tether_app
    USING (tenant_id = '_global');
CREATE POLICY global_read ON memory_vectors FOR SELECT TO tether_app
    USING (tenant_id = '_global');

-- memory 0004: the lexemes of every memory by tenant and scope, for full-text search;
-- memory 0009: each with its count in the memory (weight; the context's count half) and
-- the memory's indexed length, for bm25.
CREATE TABLE memory_terms (
    tenant_id  text NOT NULL,
    scope_key  text NOT NULL,
    term       text NOT NULL,
    memory_id  text NOT NULL,
    weight     double precision NOT NULL,
    length     double precision NOT NULL,
    PRIMARY KEY (tenant_id, scope_key, term, memory_id) INCLUDE (weight, length)
);

CREATE FUNCTION tether_memory_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM memory_terms
        WHERE tenant_id = OLD.tenant_id AND scope_key = OLD.scope || ':' || OLD.scope_id
          AND term = ANY (tsvector_to_array(OLD.tsv)) AND memory_id = OLD.memory_id;
        RETURN OLD;
    END IF;
    INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight, length)
    SELECT NEW.tenant_id, NEW.scope || ':' || NEW.scope_id, t.lexeme, NEW.memory_id,
           (SELECT sum(CASE WHEN w = 'C' THEN 0.5 ELSE 1.0 END) FROM unnest(t.weights) AS w),
           (SELECT sum(cardinality(a.positions)) FROM unnest(NEW.tsv) AS a)
    FROM unnest(NEW.tsv) AS t;
    RETURN NEW;
END $$;

CREATE TRIGGER memories_terms AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION tether_memory_terms();

GRANT SELECT, INSERT, UPDATE, DELETE ON memory_terms TO tether_app, tether_system;

ALTER TABLE memory_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_terms TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_terms TO tether_system USING (true) WITH CHECK (true);
CREATE POLICY global_read ON memory_terms FOR SELECT TO tether_app
    USING (tenant_id = '_global');

-- memory 0011: each tenant's count of memories and their summed indexed length, bm25's
-- number of documents and average length (FTS5 takes both over its whole index), kept at
-- commit on one of 16 shards per tenant (the connection's server process id picks it), so
-- a tenant's writers wait for each other only when they share a shard, and only while
-- they commit; a search adds up the tenant's shards.
CREATE TABLE memory_term_totals (
    tenant_id  text NOT NULL,
    shard      smallint NOT NULL,
    memories   bigint NOT NULL,
    length     double precision NOT NULL,
    PRIMARY KEY (tenant_id, shard)
);

CREATE FUNCTION tether_memory_term_totals() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed memories := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    sign integer := CASE WHEN TG_OP = 'DELETE' THEN -1 ELSE 1 END;
BEGIN
    INSERT INTO memory_term_totals AS totals (tenant_id, shard, memories, length)
    SELECT changed.tenant_id, pg_backend_pid() % 16, sign,
           sign * coalesce(sum(cardinality(a.positions)), 0)
    FROM unnest(changed.tsv) AS a
    ON CONFLICT (tenant_id, shard) DO UPDATE
        SET memories = totals.memories + excluded.memories,
            length = totals.length + excluded.length;
    RETURN changed;
END $$;

CREATE CONSTRAINT TRIGGER memories_term_totals AFTER INSERT OR DELETE ON memories
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION tether_memory_term_totals();

GRANT SELECT, INSERT, UPDATE, DELETE ON memory_term_totals TO tether_app, tether_system;

ALTER TABLE memory_term_totals ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_term_totals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_term_totals TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_term_totals TO tether_system USING (true) WITH CHECK (true);
CREATE POLICY global_read ON memory_term_totals FOR SELECT TO tether_app
    USING (tenant_id = '_global');

-- memory 0006: a counter per (tenant, scope) bumped by every write of the scope's vectors.
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
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_scope_versions TO tether_system
    USING (true) WITH CHECK (true);
CREATE POLICY global_read ON memory_scope_versions FOR SELECT TO tether_app
    USING (tenant_id = '_global');

-- working_memory

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
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON working_memory TO tether_system USING (true) WITH CHECK (true);

-- threads

CREATE TABLE threads (
    tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
    thread_id      text NOT NULL,
    user_id        text NOT NULL,
    title          text NOT NULL,
    created_at     timestamptz NOT NULL,
    created_by     text NOT NULL,
    updated_at     timestamptz NOT NULL,
    last_turn_seq  bigint NOT NULL DEFAULT 0,
    retention_days integer,
    expires_at     timestamptz,
    PRIMARY KEY (tenant_id, thread_id)
);

CREATE INDEX threads_by_user ON threads (tenant_id, user_id, updated_at);
CREATE INDEX threads_by_expiry ON threads (tenant_id, expires_at);

CREATE TABLE thread_turns (
    tenant_id  text NOT NULL,
    thread_id  text NOT NULL,
    seq        bigint NOT NULL,
    turn_id    text NOT NULL,
    role       text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    kind       text NOT NULL CHECK (kind IN ('message', 'tool_call', 'observation', 'summary')),
    content    text NOT NULL,
    tokens     integer NOT NULL,
    ref        text,
    metadata   text NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, seq),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES threads (tenant_id, thread_id)
);

CREATE UNIQUE INDEX thread_turns_by_id ON thread_turns (tenant_id, turn_id);
CREATE INDEX thread_turns_by_ref ON thread_turns (tenant_id, thread_id, ref);

CREATE TABLE thread_summaries (
    tenant_id    text NOT NULL,
    thread_id    text NOT NULL,
    summary_id   text NOT NULL,
    from_seq     bigint NOT NULL,
    to_seq       bigint NOT NULL,
    text         text NOT NULL,
    tokens       integer NOT NULL,
    dropped_refs text NOT NULL,
    summarizer   text NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, summary_id),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES threads (tenant_id, thread_id)
);

CREATE INDEX thread_summaries_by_range ON thread_summaries (tenant_id, thread_id, to_seq);

GRANT SELECT, INSERT, UPDATE, DELETE ON threads, thread_turns, thread_summaries
    TO tether_app, tether_system;

ALTER TABLE threads ENABLE ROW LEVEL SECURITY;
ALTER TABLE threads FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON threads TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON threads TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE thread_turns ENABLE ROW LEVEL SECURITY;
ALTER TABLE thread_turns FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON thread_turns TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON thread_turns TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE thread_summaries ENABLE ROW LEVEL SECURITY;
ALTER TABLE thread_summaries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON thread_summaries TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON thread_summaries TO tether_system USING (true) WITH CHECK (true);

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
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON procedure_versions TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE procedure_current ENABLE ROW LEVEL SECURITY;
ALTER TABLE procedure_current FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON procedure_current TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON procedure_current TO tether_system USING (true) WITH CHECK (true);

-- operations
CREATE TABLE run_retention_policies (
    tenant_id text NOT NULL REFERENCES tenants (tenant_id),
    workflow  text NOT NULL,
    keep_days integer NOT NULL,
    set_at    timestamptz NOT NULL,
    set_by    text NOT NULL,
    PRIMARY KEY (tenant_id, workflow)
);

CREATE TABLE run_holds (
    tenant_id   text NOT NULL,
    hold_id     text NOT NULL,
    run_id      text NOT NULL,
    note_digest text NOT NULL,
    created_at  timestamptz NOT NULL,
    created_by  text NOT NULL,
    released_at timestamptz,
    released_by text,
    PRIMARY KEY (tenant_id, hold_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE INDEX run_holds_by_run ON run_holds (tenant_id, run_id);

CREATE TABLE run_retained (
    tenant_id   text NOT NULL,
    run_id      text NOT NULL,
    retained_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE TABLE operator_notes (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    digest     text NOT NULL,
    text       text NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,
    PRIMARY KEY (tenant_id, digest)
);

CREATE TABLE housekeeping_leases (
    tenant_id        text NOT NULL REFERENCES tenants (tenant_id),
    owner            text,
    lease_expires_at timestamptz,
    next_due_at      timestamptz NOT NULL,
    last_pass_at     timestamptz,
    PRIMARY KEY (tenant_id)
);

CREATE TABLE run_inbox (
    tenant_id  text NOT NULL,
    run_id     text NOT NULL,
    seq        bigint NOT NULL,
    message_id text NOT NULL,
    message    text NOT NULL,
    sent_at    timestamptz NOT NULL,
    sent_by    text NOT NULL,
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE TABLE webhook_allowlist (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    prefix     text NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,
    PRIMARY KEY (tenant_id, prefix)
);

CREATE TABLE webhook_endpoints (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    endpoint_id text NOT NULL,
    url         text NOT NULL,
    events      text NOT NULL,
    created_at  timestamptz NOT NULL,
    created_by  text NOT NULL,
    removed_at  text,
    PRIMARY KEY (tenant_id, endpoint_id)
);

CREATE TABLE webhook_deliveries (
    tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
    delivery_id     text NOT NULL,
    endpoint_id     text NOT NULL,
    event_key       text NOT NULL,
    event           text NOT NULL,
    payload         text NOT NULL,
    status          text NOT NULL,
    attempts        integer NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz,
    PRIMARY KEY (tenant_id, delivery_id),
    UNIQUE (tenant_id, endpoint_id, event_key),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);

CREATE TABLE webhook_cursors (
    tenant_id text NOT NULL REFERENCES tenants (tenant_id),
    source    text NOT NULL,
    seen_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, source)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON run_retention_policies, run_holds, run_retained, operator_notes, housekeeping_leases, run_inbox, webhook_allowlist, webhook_endpoints, webhook_deliveries, webhook_cursors
    TO tether_app, tether_system;

-- Run retention deletes events and intermediate checkpoints and clears journal payloads.
GRANT DELETE ON run_events, run_checkpoints, run_journal TO tether_app, tether_system;

ALTER TABLE run_retention_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_retention_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_retention_policies TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_retention_policies TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_holds ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_holds FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_holds TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_holds TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_retained ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_retained FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_retained TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_retained TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE operator_notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE operator_notes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON operator_notes TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON operator_notes TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE housekeeping_leases ENABLE ROW LEVEL SECURITY;
ALTER TABLE housekeeping_leases FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON housekeeping_leases TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON housekeeping_leases TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_inbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_inbox FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_inbox TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_inbox TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE webhook_allowlist ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_allowlist FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_allowlist TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON webhook_allowlist TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_endpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_endpoints TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON webhook_endpoints TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_deliveries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_deliveries TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON webhook_deliveries TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE webhook_cursors ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_cursors FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_cursors TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON webhook_cursors TO tether_system USING (true) WITH CHECK (true);

CREATE TABLE graph_threads (
    tenant_id  text NOT NULL,
    thread_id  text NOT NULL,
    run_id     text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, thread_id),
    UNIQUE (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE TABLE graph_checkpoints (
    tenant_id            text NOT NULL,
    thread_id            text NOT NULL,
    checkpoint_ns        text NOT NULL,
    checkpoint_id        text NOT NULL,
    parent_checkpoint_id text,
    graph_run_id         text,
    checkpoint           text NOT NULL,
    metadata             text NOT NULL,
    blob_channels        text NOT NULL,
    inline_type          text,
    inline_data          bytea,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, checkpoint_id),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES graph_threads (tenant_id, thread_id)
);

CREATE TABLE graph_blobs (
    tenant_id     text NOT NULL,
    thread_id     text NOT NULL,
    checkpoint_ns text NOT NULL,
    channel       text NOT NULL,
    version       text NOT NULL,
    type          text NOT NULL,
    data          bytea,
    base_version  text,
    keep          integer,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, channel, version)
);

CREATE TABLE graph_writes (
    tenant_id     text NOT NULL,
    thread_id     text NOT NULL,
    checkpoint_ns text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id       text NOT NULL,
    idx           integer NOT NULL,
    channel       text NOT NULL,
    type          text NOT NULL,
    data          bytea,
    task_path     text NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

CREATE TABLE graph_store_items (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    namespace   text NOT NULL,
    key         text NOT NULL,
    memory_id   text,
    value       text,
    vector      bytea,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    ttl_minutes double precision,
    expires_at  timestamptz,
    PRIMARY KEY (tenant_id, namespace, key),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, memory_id)
        ON DELETE CASCADE
);

CREATE INDEX graph_store_items_by_memory ON graph_store_items (tenant_id, memory_id);
CREATE INDEX graph_store_items_expiring ON graph_store_items (tenant_id, expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON graph_threads, graph_checkpoints, graph_blobs, graph_writes, graph_store_items
    TO tether_app, tether_system;

ALTER TABLE graph_threads ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_threads FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_threads TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_threads TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_checkpoints TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_checkpoints TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_blobs ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_blobs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_blobs TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_blobs TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_writes ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_writes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_writes TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_writes TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_store_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_store_items FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_store_items TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_store_items TO tether_system USING (true) WITH CHECK (true);

INSERT INTO tether_schema_versions (component, version, name, applied_at)
VALUES ('core', 1, 'initial', now()),
       ('core', 2, 'signed_tenant', now()),
       ('core', 3, 'transaction_bound_tenant', now()),
       ('core', 4, 'api_keys', now()),
       ('core', 5, 'audit_by_target_and_actor', now()),
       ('runs', 1, 'initial', now()),
       ('runs', 2, 'leases', now()),
       ('runs', 3, 'signed_tenant', now()),
       ('runs', 4, 'workers', now()),
       ('runs', 5, 'cancel_reason', now()),
       ('runs', 6, 'lean_run_indexes', now()),
       ('memory', 1, 'initial', now()),
       ('memory', 2, 'global', now()),
       ('memory', 3, 'stemming', now()),
       ('memory', 4, 'search_terms', now()),
       ('memory', 5, 'vector_parts', now()),
       ('memory', 6, 'scope_versions', now()),
       ('memory', 7, 'signed_tenant', now()),
       ('memory', 8, 'context', now()),
       ('memory', 9, 'term_lengths', now()),
       ('memory', 10, 'stop_words', now()),
       ('memory', 11, 'term_totals', now()),
       ('working_memory', 1, 'initial', now()),
       ('working_memory', 2, 'signed_tenant', now()),
       ('threads', 1, 'initial', now()),
       ('threads', 2, 'signed_tenant', now()),
       ('procedures', 1, 'initial', now()),
       ('procedures', 2, 'signed_tenant', now()),
       ('operations', 1, 'initial', now()),
       ('langgraph', 1, 'initial', now());
