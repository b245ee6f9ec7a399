-- memory 0001: governed memory records, their full-text index and vectors, the policy's
-- decision log, the recall log, consents, legal holds and erasure tombstones.

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
    PRIMARY KEY (tenant_id, memory_id)
) WITHOUT ROWID;

CREATE INDEX memories_by_scope ON memories (tenant_id, scope, scope_id, status);
CREATE INDEX memories_by_fact_key ON memories (tenant_id, scope, scope_id, fact_key);
CREATE INDEX memories_by_kind ON memories (tenant_id, kind, status, scope, scope_id);
CREATE INDEX memories_by_source ON memories (tenant_id, source_ref, source_version);
CREATE INDEX memories_by_fts_rowid ON memories (fts_rowid);

CREATE VIRTUAL TABLE memory_fts USING fts5 (
    text, scope_token, tokenize = 'unicode61 remove_diacritics 2'
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
    PRIMARY KEY (tenant_id, memory_id, embedder_id)
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
