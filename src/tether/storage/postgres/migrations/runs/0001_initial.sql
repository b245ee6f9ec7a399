-- runs 0001: runs, their checkpoints, the effect/step journal, waits and events.

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
    PRIMARY KEY (tenant_id, run_id)
);

CREATE INDEX runs_by_status ON runs (tenant_id, status, updated_at);
CREATE INDEX runs_runnable ON runs (status, resume_at);

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
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON runs TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_checkpoints TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON run_checkpoints TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_journal ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_journal FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_journal TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON run_journal TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_waits ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_waits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_waits TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON run_waits TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE run_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_events TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON run_events TO tether_system USING (true) WITH CHECK (true);
