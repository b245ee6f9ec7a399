-- threads 0001: conversation threads, their turns (stored once, in order) and the
-- summaries stored beside them (a summary never replaces the turns it covers).

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
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON threads TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE thread_turns ENABLE ROW LEVEL SECURITY;
ALTER TABLE thread_turns FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON thread_turns TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON thread_turns TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE thread_summaries ENABLE ROW LEVEL SECURITY;
ALTER TABLE thread_summaries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON thread_summaries TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON thread_summaries TO tether_system USING (true) WITH CHECK (true);
