-- The current SQLite schema, maintained by hand beside the migrations.
-- tests/conformance/test_migrations.py checks that migrating an empty database
-- gives exactly this schema.

CREATE TABLE tether_schema_versions (
    component  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (component, version)
) WITHOUT ROWID;

CREATE TABLE tether_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE tenants (
    tenant_id  TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    audit_seq  INTEGER NOT NULL DEFAULT 0,
    audit_head TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;

CREATE TABLE principals (
    tenant_id    TEXT NOT NULL REFERENCES tenants (tenant_id),
    principal_id TEXT NOT NULL,
    roles        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    updated_by   TEXT NOT NULL,
    PRIMARY KEY (tenant_id, principal_id)
) WITHOUT ROWID;

CREATE TABLE audit_log (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    seq        INTEGER NOT NULL,
    entry_id   TEXT NOT NULL,
    at         TEXT NOT NULL,
    actor_id   TEXT NOT NULL,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL,
    details    TEXT NOT NULL,
    subjects   TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    entry_hash TEXT NOT NULL,
    PRIMARY KEY (tenant_id, seq)
) WITHOUT ROWID;

CREATE INDEX audit_log_by_action ON audit_log (tenant_id, action, seq);
CREATE INDEX audit_log_by_target ON audit_log (tenant_id, target, seq);
CREATE INDEX audit_log_by_actor ON audit_log (tenant_id, actor_id, seq);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TABLE api_keys (
    tenant_id    TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    roles        TEXT NOT NULL,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    hash_key_id  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT,
    revoked_by   TEXT,
    PRIMARY KEY (tenant_id, key_id),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, principal_id)
) WITHOUT ROWID;

-- runs
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
    lease_epoch      INTEGER NOT NULL DEFAULT 0,
    storage_faults   INTEGER NOT NULL DEFAULT 0,
    priority         INTEGER NOT NULL DEFAULT 0,
    parent_run_id    TEXT,
    parent_wait_id   TEXT,
    child_serial     INTEGER NOT NULL DEFAULT 0,
    cancel_reason    TEXT,
    PRIMARY KEY (tenant_id, run_id)
) WITHOUT ROWID;

CREATE INDEX runs_by_status ON runs (tenant_id, status, updated_at)
    WHERE status <> 'running';
CREATE INDEX runs_runnable ON runs (status, resume_at) WHERE status = 'scheduled';
CREATE INDEX runs_running ON runs (status, tenant_id, workflow);
CREATE INDEX runs_children ON runs (tenant_id, parent_run_id)
    WHERE parent_run_id IS NOT NULL;

CREATE TABLE run_limits (
    tenant_id   TEXT NOT NULL REFERENCES tenants (tenant_id),
    max_running INTEGER NOT NULL,
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL,
    PRIMARY KEY (tenant_id)
) WITHOUT ROWID;

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

-- memory
CREATE TABLE memories (
    tenant_id      TEXT NOT NULL REFERENCES tenants (tenant_id),
    memory_id      TEXT NOT NULL,
    scope          TEXT NOT NULL,
    scope_id       TEXT NOT NULL,
    subjects       TEXT NOT NULL,
    kind           TEXT NOT NULL,
    fact_key       TEXT,
    text           TEXT NOT NULL,
    tags           TEXT NOT NULL,
    source_type    TEXT NOT NULL,
    source_ref     TEXT,
    source_version TEXT,
    created_by     TEXT NOT NULL,
    approved_by    TEXT,
    confidence     REAL NOT NULL,
    sensitivity    TEXT NOT NULL,
    valid_from     TEXT NOT NULL,
    valid_to       TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    expires_at     TEXT,
    supersedes     TEXT,
    superseded_by  TEXT,
    superseded_at  TEXT,
    access_count   INTEGER NOT NULL DEFAULT 0,
    last_access    TEXT,
    status         TEXT NOT NULL,
    purge_after    TEXT,
    fts_rowid      INTEGER,
    index_context  TEXT,
    episode        TEXT,
    contradicted_at TEXT,
    PRIMARY KEY (tenant_id, memory_id)
) WITHOUT ROWID;

CREATE INDEX memories_by_scope ON memories (tenant_id, scope, scope_id, status);
CREATE INDEX memories_by_fact_key ON memories (tenant_id, scope, scope_id, fact_key);
CREATE INDEX memories_by_kind ON memories (tenant_id, kind, status, scope, scope_id);
CREATE INDEX memories_by_source ON memories (tenant_id, source_ref, source_version);
CREATE INDEX memories_by_fts_rowid ON memories (fts_rowid);

-- Each word behind its (tenant, scope) prefix: see tether.storage._memory_ops.scope_token.
-- `terms`: the memory's text; `context`: what it is indexed with (ranked lower).
CREATE VIRTUAL TABLE memory_fts USING fts5 (
    terms, context, tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE memory_subjects (
    tenant_id  TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, subject_id, memory_id)
) WITHOUT ROWID;

CREATE TABLE memory_vectors (
    tenant_id   TEXT NOT NULL,
    memory_id   TEXT NOT NULL,
    embedder_id TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB NOT NULL,
    part        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, memory_id, embedder_id, part)
) WITHOUT ROWID;

-- A counter per (tenant, scope) bumped by every write of the scope's vectors.
CREATE TABLE memory_scope_versions (
    tenant_id  TEXT NOT NULL,
    scope_token  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, scope_token)
) WITHOUT ROWID;

CREATE TABLE memory_decisions (
    tenant_id     TEXT NOT NULL REFERENCES tenants (tenant_id),
    decision_id   TEXT NOT NULL,
    at            TEXT NOT NULL,
    principal_id  TEXT NOT NULL,
    verdict       TEXT NOT NULL,
    reasons       TEXT NOT NULL,
    findings      TEXT NOT NULL,
    text_digest   TEXT NOT NULL,
    subject_hashes TEXT NOT NULL,
    memory_id     TEXT,
    run_id        TEXT,
    PRIMARY KEY (tenant_id, decision_id)
) WITHOUT ROWID;

CREATE TABLE memory_recalls (
    tenant_id    TEXT NOT NULL REFERENCES tenants (tenant_id),
    recall_id    TEXT NOT NULL,
    at           TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    query_digest TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    returned     TEXT NOT NULL,
    PRIMARY KEY (tenant_id, recall_id)
) WITHOUT ROWID;

CREATE TABLE memory_consents (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    user_id    TEXT NOT NULL,
    purpose    TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    revoked_at TEXT,
    PRIMARY KEY (tenant_id, user_id, purpose)
) WITHOUT ROWID;

CREATE TABLE memory_holds (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    hold_id    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    reason     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    released_at TEXT,
    PRIMARY KEY (tenant_id, hold_id)
) WITHOUT ROWID;

CREATE TABLE memory_policies (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    config     TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id)
) WITHOUT ROWID;

CREATE TABLE memory_tombstones (
    tenant_id    TEXT NOT NULL REFERENCES tenants (tenant_id),
    tombstone_id TEXT NOT NULL,
    subject_hash TEXT NOT NULL,
    erased_at    TEXT NOT NULL,
    erased_by    TEXT NOT NULL,
    counts       TEXT NOT NULL,
    PRIMARY KEY (tenant_id, tombstone_id)
) WITHOUT ROWID;

-- working_memory

CREATE TABLE working_memory (
    tenant_id  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    expires_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, session_id, key)
) WITHOUT ROWID;

CREATE INDEX working_memory_by_expiry ON working_memory (expires_at)
    WHERE expires_at IS NOT NULL;

-- threads

CREATE TABLE threads (
    tenant_id      TEXT NOT NULL REFERENCES tenants (tenant_id),
    thread_id      TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    title          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    last_turn_seq  INTEGER NOT NULL DEFAULT 0,
    retention_days INTEGER,
    expires_at     TEXT,
    PRIMARY KEY (tenant_id, thread_id)
) WITHOUT ROWID;

CREATE INDEX threads_by_user ON threads (tenant_id, user_id, updated_at);
CREATE INDEX threads_by_expiry ON threads (tenant_id, expires_at);

CREATE TABLE thread_turns (
    tenant_id  TEXT NOT NULL,
    thread_id  TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    turn_id    TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    kind       TEXT NOT NULL CHECK (kind IN ('message', 'tool_call', 'observation', 'summary')),
    content    TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    ref        TEXT,
    metadata   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, seq),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES threads (tenant_id, thread_id)
) WITHOUT ROWID;

CREATE UNIQUE INDEX thread_turns_by_id ON thread_turns (tenant_id, turn_id);
CREATE INDEX thread_turns_by_ref ON thread_turns (tenant_id, thread_id, ref);

CREATE TABLE thread_summaries (
    tenant_id    TEXT NOT NULL,
    thread_id    TEXT NOT NULL,
    summary_id   TEXT NOT NULL,
    from_seq     INTEGER NOT NULL,
    to_seq       INTEGER NOT NULL,
    text         TEXT NOT NULL,
    tokens       INTEGER NOT NULL,
    dropped_refs TEXT NOT NULL,
    summarizer   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, summary_id),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES threads (tenant_id, thread_id)
) WITHOUT ROWID;

CREATE INDEX thread_summaries_by_range ON thread_summaries (tenant_id, thread_id, to_seq);

CREATE TABLE procedure_versions (
    tenant_id    TEXT NOT NULL REFERENCES tenants (tenant_id),
    version      TEXT NOT NULL,
    documents    TEXT NOT NULL,
    source       TEXT NOT NULL,
    published_at TEXT NOT NULL,
    published_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
) WITHOUT ROWID;

CREATE TABLE procedure_current (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    version    TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id),
    FOREIGN KEY (tenant_id, version) REFERENCES procedure_versions (tenant_id, version)
) WITHOUT ROWID;

-- memory 0002: the reserved tenant of global memory.
INSERT INTO tenants (tenant_id, name, created_at, created_by)
VALUES ('_global', 'global memory', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'system')
ON CONFLICT (tenant_id) DO NOTHING;

-- operations
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

CREATE TABLE graph_threads (
    tenant_id  TEXT NOT NULL,
    thread_id  TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, thread_id),
    UNIQUE (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
) WITHOUT ROWID;

CREATE TABLE graph_checkpoints (
    tenant_id            TEXT NOT NULL,
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL,
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    graph_run_id         TEXT,
    checkpoint           TEXT NOT NULL,
    metadata             TEXT NOT NULL,
    blob_channels        TEXT NOT NULL,
    inline_type          TEXT,
    inline_data          BLOB,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, checkpoint_id),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES graph_threads (tenant_id, thread_id)
);

CREATE TABLE graph_blobs (
    tenant_id     TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    channel       TEXT NOT NULL,
    version       TEXT NOT NULL,
    type          TEXT NOT NULL,
    data          BLOB,
    base_version  TEXT,
    keep          INTEGER,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, channel, version)
) WITHOUT ROWID;

CREATE TABLE graph_writes (
    tenant_id     TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    type          TEXT NOT NULL,
    data          BLOB,
    task_path     TEXT NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;

CREATE TABLE graph_store_items (
    tenant_id   TEXT NOT NULL REFERENCES tenants (tenant_id),
    namespace   TEXT NOT NULL,
    key         TEXT NOT NULL,
    memory_id   TEXT,
    value       TEXT,
    vector      BLOB,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    ttl_minutes REAL,
    expires_at  TEXT,
    PRIMARY KEY (tenant_id, namespace, key),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, memory_id)
        ON DELETE CASCADE
);

CREATE INDEX graph_store_items_by_memory ON graph_store_items (tenant_id, memory_id);
CREATE INDEX graph_store_items_expiring ON graph_store_items (tenant_id, expires_at);

INSERT INTO tether_schema_versions (component, version, name, applied_at)
VALUES ('core', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('core', 2, 'signed_tenant', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('core', 3, 'transaction_bound_tenant', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('core', 4, 'api_keys', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('core', 5, 'audit_by_target_and_actor', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('runs', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('runs', 2, 'leases', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('runs', 3, 'workers', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('runs', 4, 'cancel_reason', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('runs', 5, 'lean_run_indexes', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('memory', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('memory', 2, 'global', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('memory', 3, 'scoped_terms', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('memory', 4, 'vector_parts', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('memory', 5, 'scope_versions', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('memory', 6, 'context', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('working_memory', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('threads', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('procedures', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('operations', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
       ('langgraph', 1, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
