-- threads 0001: conversation threads, their turns (stored once, in order) and the
-- summaries stored beside them (a summary never replaces the turns it covers).

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
