-- langgraph 0001: LangGraph threads checkpointed by Tether (each thread's run row, its
-- checkpoints, the channel values they reference and the pending writes of their tasks),
-- and the items of LangGraph's key-value store.
--
-- A checkpoint carries its scalar channel values inline (`inline_type`, `inline_data`: the
-- serializer's tag and bytes); the others (`blob_channels`) are stored once per (thread,
-- namespace, channel, version), and a list that grew from an earlier version as the items
-- appended to it: the first `keep` items of `base_version`, then the items in `data`.

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
