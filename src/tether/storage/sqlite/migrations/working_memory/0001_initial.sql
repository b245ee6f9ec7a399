-- working_memory 0001: session-scoped key/value state with an optional expiry. An entry
-- past its expiry is invisible at once and deleted by the purge.

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
