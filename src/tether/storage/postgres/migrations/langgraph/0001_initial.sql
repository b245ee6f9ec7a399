-- langgraph 0001: LangGraph threads checkpointed by Tether (each thread's run row, its
-- checkpoints, the channel values they reference and the pending writes of their tasks),
-- and the items of LangGraph's key-value store.
--
-- A checkpoint carries its scalar channel values inline (`inline_type`, `inline_data`: the
-- serializer's tag and bytes); the others (`blob_channels`) are stored once per (thread,
-- namespace, channel, version), and a list that grew from an earlier version as the items
-- appended to it: the first `keep` items of `base_version`, then the items in `data`.

CREATE TABLE graph_threads (
    tenant_id  text NOT NULL,
    thread_id  text NOT NULL,
    run_id     text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, thread_id),
    UNIQUE (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

CREATE TABLE graph_checkpoints (
    tenant_id            text NOT NULL,
    thread_id            text NOT NULL,
    checkpoint_ns        text NOT NULL,
    checkpoint_id        text NOT NULL,
    parent_checkpoint_id text,
    graph_run_id         text,
    checkpoint           text NOT NULL,
    metadata             text NOT NULL,
    blob_channels        text NOT NULL,
    inline_type          text,
    inline_data          bytea,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, checkpoint_id),
    FOREIGN KEY (tenant_id, thread_id) REFERENCES graph_threads (tenant_id, thread_id)
);

CREATE TABLE graph_blobs (
    tenant_id     text NOT NULL,
    thread_id     text NOT NULL,
    checkpoint_ns text NOT NULL,
    channel       text NOT NULL,
    version       text NOT NULL,
    type          text NOT NULL,
    data          bytea,
    base_version  text,
    keep          integer,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, channel, version)
);

CREATE TABLE graph_writes (
    tenant_id     text NOT NULL,
    thread_id     text NOT NULL,
    checkpoint_ns text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id       text NOT NULL,
    idx           integer NOT NULL,
    channel       text NOT NULL,
    type          text NOT NULL,
    data          bytea,
    task_path     text NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

CREATE TABLE graph_store_items (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    namespace   text NOT NULL,
    key         text NOT NULL,
    memory_id   text,
    value       text,
    vector      bytea,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    ttl_minutes double precision,
    expires_at  timestamptz,
    PRIMARY KEY (tenant_id, namespace, key),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, memory_id)
        ON DELETE CASCADE
);

CREATE INDEX graph_store_items_by_memory ON graph_store_items (tenant_id, memory_id);
CREATE INDEX graph_store_items_expiring ON graph_store_items (tenant_id, expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON graph_threads, graph_checkpoints, graph_blobs, graph_writes, graph_store_items
    TO tether_app, tether_system;

ALTER TABLE graph_threads ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_threads FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_threads TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_threads TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_checkpoints TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_checkpoints TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_blobs ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_blobs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_blobs TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_blobs TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_writes ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_writes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_writes TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_writes TO tether_system USING (true) WITH CHECK (true);

ALTER TABLE graph_store_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE graph_store_items FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON graph_store_items TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON graph_store_items TO tether_system USING (true) WITH CHECK (true);
