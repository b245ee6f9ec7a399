-- operations 0001: run retention (policies, legal holds, which runs were compacted), the
-- erasable notes operator actions reference by digest, housekeeping leases, the run inbox
-- and webhooks (allowlist, endpoints, deliveries, scan cursors).

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
