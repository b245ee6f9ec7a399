-- runs 0001: runs, their checkpoints, the effect/step journal, waits and events.

CREATE TABLE runs (
    tenant_id        TEXT NOT NULL REFERENCES tenants (tenant_id),
    run_id           TEXT NOT NULL,
    workflow         TEXT NOT NULL,
    workflow_version INTEGER NOT NULL,
    status           TEXT NOT NULL,
    current_node     TEXT NOT NULL,
    state_version    INTEGER NOT NULL,
    checkpoint_seq   INTEGER NOT NULL,
    full_seq         INTEGER NOT NULL,
    delta_bytes      INTEGER NOT NULL,
    full_bytes       INTEGER NOT NULL,
    event_seq        INTEGER NOT NULL,
    version          INTEGER NOT NULL,
    lease_owner      TEXT,
    lease_expires_at TEXT,
    attempt          INTEGER NOT NULL,
    steps            INTEGER NOT NULL,
    max_steps        INTEGER NOT NULL,
    deadline         TEXT,
    resume_at        TEXT,
    wait_id          TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    error            TEXT,
    visits           TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    created_by       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    updated_by       TEXT NOT NULL,
    PRIMARY KEY (tenant_id, run_id)
) WITHOUT ROWID;

CREATE INDEX runs_by_status ON runs (tenant_id, status, updated_at);
CREATE INDEX runs_runnable ON runs (status, resume_at);

CREATE TABLE run_checkpoints (
    tenant_id     TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    node          TEXT NOT NULL,
    next_node     TEXT NOT NULL,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL,
    state_version INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE TABLE run_journal (
    tenant_id       TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    node            TEXT NOT NULL,
    visit           INTEGER NOT NULL,
    position        INTEGER NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    status          TEXT NOT NULL,
    request_digest  TEXT NOT NULL,
    result          TEXT,
    error           TEXT,
    retry_safe      INTEGER NOT NULL,
    started_at      TEXT NOT NULL,
    finished_at     TEXT,
    duration_ms     REAL,
    tokens_in       INTEGER,
    tokens_out      INTEGER,
    cost_usd        REAL,
    wait_id         TEXT,
    PRIMARY KEY (tenant_id, run_id, node, visit, position),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE TABLE run_waits (
    tenant_id     TEXT NOT NULL,
    wait_id       TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    node          TEXT NOT NULL,
    visit         INTEGER NOT NULL,
    position      INTEGER NOT NULL,
    kind          TEXT NOT NULL,
    reason        TEXT NOT NULL,
    status        TEXT NOT NULL,
    message       TEXT NOT NULL,
    request       TEXT NOT NULL,
    action_digest TEXT,
    approver_role TEXT,
    requested_by  TEXT NOT NULL,
    resume_at     TEXT,
    expires_at    TEXT,
    created_at    TEXT NOT NULL,
    resolved_at   TEXT,
    resolved_by   TEXT,
    resolution    TEXT,
    PRIMARY KEY (tenant_id, wait_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE INDEX run_waits_by_status ON run_waits (tenant_id, kind, status, created_at);
CREATE INDEX run_waits_by_run ON run_waits (tenant_id, run_id);
CREATE INDEX run_waits_expiring ON run_waits (status, expires_at);

CREATE TABLE run_events (
    tenant_id   TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    at          TEXT NOT NULL,
    type        TEXT NOT NULL,
    node        TEXT,
    duration_ms REAL,
    data        TEXT NOT NULL,
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;
