-- operations 0001: run retention (policies, legal holds, which runs were compacted), the
-- erasable notes operator actions reference by digest, housekeeping leases, the run inbox
-- and webhooks (allowlist, endpoints, deliveries, scan cursors).

CREATE TABLE run_retention_policies (
    tenant_id TEXT NOT NULL REFERENCES tenants (tenant_id),
    workflow  TEXT NOT NULL,
    keep_days INTEGER NOT NULL,
    set_at    TEXT NOT NULL,
    set_by    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, workflow)
) WITHOUT ROWID;

CREATE TABLE run_holds (
    tenant_id   TEXT NOT NULL,
    hold_id     TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    note_digest TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    released_at TEXT,
    released_by TEXT,
    PRIMARY KEY (tenant_id, hold_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE INDEX run_holds_by_run ON run_holds (tenant_id, run_id);

CREATE TABLE run_retained (
    tenant_id   TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    retained_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE TABLE operator_notes (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    digest     TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, digest)
) WITHOUT ROWID;

CREATE TABLE housekeeping_leases (
    tenant_id        TEXT NOT NULL REFERENCES tenants (tenant_id),
    owner            TEXT,
    lease_expires_at TEXT,
    next_due_at      TEXT NOT NULL,
    last_pass_at     TEXT,
    PRIMARY KEY (tenant_id)
) WITHOUT ROWID;

CREATE TABLE run_inbox (
    tenant_id  TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    message    TEXT NOT NULL,
    sent_at    TEXT NOT NULL,
    sent_by    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE TABLE webhook_allowlist (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    prefix     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, prefix)
) WITHOUT ROWID;

CREATE TABLE webhook_endpoints (
    tenant_id   TEXT NOT NULL REFERENCES tenants (tenant_id),
    endpoint_id TEXT NOT NULL,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    removed_at  TEXT,
    PRIMARY KEY (tenant_id, endpoint_id)
) WITHOUT ROWID;

CREATE TABLE webhook_deliveries (
    tenant_id       TEXT NOT NULL REFERENCES tenants (tenant_id),
    delivery_id     TEXT NOT NULL,
    endpoint_id     TEXT NOT NULL,
    event_key       TEXT NOT NULL,
    event           TEXT NOT NULL,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at TEXT NOT NULL,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    delivered_at    TEXT,
    PRIMARY KEY (tenant_id, delivery_id),
    UNIQUE (tenant_id, endpoint_id, event_key),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id)
) WITHOUT ROWID;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);

CREATE TABLE webhook_cursors (
    tenant_id TEXT NOT NULL REFERENCES tenants (tenant_id),
    source    TEXT NOT NULL,
    seen_at   TEXT NOT NULL,
    PRIMARY KEY (tenant_id, source)
) WITHOUT ROWID;
