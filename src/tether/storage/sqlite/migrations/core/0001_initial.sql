-- core 0001: tenants, principals, the audit trail and database metadata.

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

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
