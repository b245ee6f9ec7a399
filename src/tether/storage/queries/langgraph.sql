-- LangGraph threads checkpointed by Tether, and LangGraph's key-value store. Written once
-- for both backends; the filtered checkpoint listing differs (storage/<backend>/queries).

-- name: get_graph_thread
SELECT t.run_id, r.status, r.event_seq, r.updated_at
FROM graph_threads t
JOIN runs r ON r.tenant_id = t.tenant_id AND r.run_id = t.run_id
WHERE t.tenant_id = :tenant_id AND t.thread_id = :thread_id

-- name: insert_graph_thread
INSERT INTO graph_threads (tenant_id, thread_id, run_id, created_at)
VALUES (:tenant_id, :thread_id, :run_id, :created_at)

-- name: insert_graph_thread_run
-- The run row of a new thread (workflow 'langgraph', version 0, which no worker claims),
-- only if the thread has none yet: one statement instead of a read and an insert. A row
-- returned: the run was created, and the caller inserts the thread row that names it.
INSERT INTO runs (tenant_id, run_id, workflow, workflow_version, status, current_node,
                  state_version, checkpoint_seq, full_seq, delta_bytes, full_bytes, event_seq,
                  version, lease_owner, lease_expires_at, attempt, steps, max_steps, deadline,
                  resume_at, wait_id, cancel_requested, error, visits, created_at,
                  created_by, updated_at, updated_by, lease_epoch, storage_faults, priority,
                  parent_run_id, parent_wait_id, child_serial)
SELECT :tenant_id, :run_id, 'langgraph', 0, :status, '', 0, 0, 0, 0, 0, 1, 1, NULL, NULL, 0, 0,
       0, NULL, NULL, NULL, FALSE, NULL, '{}', :created_at, :created_by, :created_at,
       :created_by, 0, 0, 0, NULL, NULL, FALSE
WHERE NOT EXISTS (
    SELECT 1 FROM graph_threads WHERE tenant_id = :tenant_id AND thread_id = :thread_id
)
RETURNING run_id

-- name: list_graph_threads_by_run
SELECT thread_id FROM graph_threads WHERE tenant_id = :tenant_id AND run_id = :run_id

-- name: update_graph_run
-- The run row of a thread, moved by the thread's last checkpoint or pending writes; only
-- if no event was added since the row the move was made from (no row returned: stale).
UPDATE runs
SET status = :status, current_node = :current_node, steps = :steps, wait_id = :wait_id,
    error = :error, event_seq = :event_seq, updated_at = :updated_at,
    updated_by = :updated_by, version = version + 1
WHERE tenant_id = :tenant_id AND run_id = :run_id AND event_seq = :expected_event_seq
RETURNING version

-- name: delete_run_retained
-- A compacted thread that runs again is compacted again after its next retention period.
DELETE FROM run_retained WHERE tenant_id = :tenant_id AND run_id = :run_id

-- name: upsert_graph_checkpoint
INSERT INTO graph_checkpoints (
    tenant_id, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, graph_run_id,
    checkpoint, metadata, blob_channels, inline_type, inline_data
)
VALUES (
    :tenant_id, :thread_id, :checkpoint_ns, :checkpoint_id, :parent_checkpoint_id,
    :graph_run_id, :checkpoint, :metadata, :blob_channels, :inline_type, :inline_data
)
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, checkpoint_id) DO UPDATE
SET parent_checkpoint_id = excluded.parent_checkpoint_id,
    graph_run_id = excluded.graph_run_id, checkpoint = excluded.checkpoint,
    metadata = excluded.metadata, blob_channels = excluded.blob_channels,
    inline_type = excluded.inline_type, inline_data = excluded.inline_data

-- name: insert_graph_blob
INSERT INTO graph_blobs (
    tenant_id, thread_id, checkpoint_ns, channel, version, type, data, base_version, keep
)
VALUES (
    :tenant_id, :thread_id, :checkpoint_ns, :channel, :version, :type, :data, :base_version,
    :keep
)
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, channel, version) DO NOTHING

-- name: insert_graph_write
INSERT INTO graph_writes (
    tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, data,
    task_path
)
VALUES (
    :tenant_id, :thread_id, :checkpoint_ns, :checkpoint_id, :task_id, :idx, :channel, :type,
    :data, :task_path
)
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING

-- name: upsert_graph_write
INSERT INTO graph_writes (
    tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, data,
    task_path
)
VALUES (
    :tenant_id, :thread_id, :checkpoint_ns, :checkpoint_id, :task_id, :idx, :channel, :type,
    :data, :task_path
)
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE
SET channel = excluded.channel, type = excluded.type, data = excluded.data,
    task_path = excluded.task_path

-- name: get_graph_checkpoint
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
       blob_channels, inline_type, inline_data
FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
  AND checkpoint_id = :checkpoint_id

-- name: latest_graph_checkpoint
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
       blob_channels, inline_type, inline_data
FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
ORDER BY checkpoint_id DESC
LIMIT 1

-- name: graph_blob_chain
-- A channel's value at a version: its own row, then the rows it extends (nearest first).
WITH RECURSIVE chain (version, base_version, keep, type, data, depth) AS (
    SELECT version, base_version, keep, type, data, 0
    FROM graph_blobs
    WHERE tenant_id = :tenant_id AND thread_id = :thread_id
      AND checkpoint_ns = :checkpoint_ns AND channel = :channel AND version = :version
    UNION ALL
    SELECT b.version, b.base_version, b.keep, b.type, b.data, c.depth + 1
    FROM chain c
    JOIN graph_blobs b
      ON b.tenant_id = :tenant_id AND b.thread_id = :thread_id
     AND b.checkpoint_ns = :checkpoint_ns AND b.channel = :channel
     AND b.version = c.base_version
)
SELECT version, base_version, keep, type, data FROM chain ORDER BY depth

-- name: list_graph_writes
SELECT task_id, idx, channel, type, data, task_path
FROM graph_writes
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
  AND checkpoint_id = :checkpoint_id
ORDER BY task_path, task_id, idx

-- name: list_latest_graph_writes
-- The pending writes of the namespace's latest checkpoint (see latest_graph_checkpoint).
SELECT task_id, idx, channel, type, data, task_path
FROM graph_writes
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
  AND checkpoint_id = (
      SELECT checkpoint_id FROM graph_checkpoints
      WHERE tenant_id = :tenant_id AND thread_id = :thread_id
        AND checkpoint_ns = :checkpoint_ns
      ORDER BY checkpoint_id DESC
      LIMIT 1
  )
ORDER BY task_path, task_id, idx

-- name: list_graph_thread_writes
-- Every pending write of a thread, without its value (a timeline shows what and how big).
SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, LENGTH(data) AS size,
       task_path
FROM graph_writes
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
ORDER BY checkpoint_ns, checkpoint_id, task_path, task_id, idx

-- name: delete_graph_thread_writes
DELETE FROM graph_writes WHERE tenant_id = :tenant_id AND thread_id = :thread_id

-- name: delete_graph_thread_blobs
DELETE FROM graph_blobs WHERE tenant_id = :tenant_id AND thread_id = :thread_id

-- name: delete_graph_thread_checkpoints
DELETE FROM graph_checkpoints WHERE tenant_id = :tenant_id AND thread_id = :thread_id

-- name: delete_graph_thread_row
DELETE FROM graph_threads WHERE tenant_id = :tenant_id AND thread_id = :thread_id
RETURNING run_id

-- name: list_graph_checkpoints_of_run
SELECT thread_id, checkpoint_ns, checkpoint_id FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND graph_run_id = :graph_run_id

-- name: delete_graph_checkpoint
DELETE FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
  AND checkpoint_id = :checkpoint_id

-- name: delete_graph_checkpoint_writes
DELETE FROM graph_writes
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
  AND checkpoint_id = :checkpoint_id

-- name: copy_graph_checkpoints
INSERT INTO graph_checkpoints (
    tenant_id, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, graph_run_id,
    checkpoint, metadata, blob_channels, inline_type, inline_data
)
SELECT tenant_id, :target_thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
       graph_run_id, checkpoint, metadata, blob_channels, inline_type, inline_data
FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, checkpoint_id) DO NOTHING

-- name: copy_graph_blobs
INSERT INTO graph_blobs (
    tenant_id, thread_id, checkpoint_ns, channel, version, type, data, base_version, keep
)
SELECT tenant_id, :target_thread_id, checkpoint_ns, channel, version, type, data,
       base_version, keep
FROM graph_blobs
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, channel, version) DO NOTHING

-- name: copy_graph_writes
INSERT INTO graph_writes (
    tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, data,
    task_path
)
SELECT tenant_id, :target_thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel,
       type, data, task_path
FROM graph_writes
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
ON CONFLICT (tenant_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING

-- name: delete_graph_checkpoints_but_latest
DELETE FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
  AND checkpoint_id <> (
      SELECT max(m.checkpoint_id) FROM graph_checkpoints m
      WHERE m.tenant_id = graph_checkpoints.tenant_id
        AND m.thread_id = graph_checkpoints.thread_id
        AND m.checkpoint_ns = graph_checkpoints.checkpoint_ns
  )

-- name: delete_graph_writes_without_checkpoint
DELETE FROM graph_writes
WHERE tenant_id = :tenant_id AND thread_id = :thread_id
  AND NOT EXISTS (
      SELECT 1 FROM graph_checkpoints c
      WHERE c.tenant_id = graph_writes.tenant_id AND c.thread_id = graph_writes.thread_id
        AND c.checkpoint_ns = graph_writes.checkpoint_ns
        AND c.checkpoint_id = graph_writes.checkpoint_id
  )

-- name: list_graph_thread_checkpoints
SELECT checkpoint_ns, checkpoint, blob_channels FROM graph_checkpoints
WHERE tenant_id = :tenant_id AND thread_id = :thread_id

-- name: list_graph_blob_links
SELECT checkpoint_ns, channel, version, base_version FROM graph_blobs
WHERE tenant_id = :tenant_id AND thread_id = :thread_id

-- name: delete_graph_blob
DELETE FROM graph_blobs
WHERE tenant_id = :tenant_id AND thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
  AND channel = :channel AND version = :version

-- name: get_store_item
SELECT namespace, key, memory_id, value, vector, created_at, updated_at, ttl_minutes,
       expires_at
FROM graph_store_items
WHERE tenant_id = :tenant_id AND namespace = :namespace AND key = :key

-- name: get_store_item_by_memory
SELECT namespace, key, memory_id, value, vector, created_at, updated_at, ttl_minutes,
       expires_at
FROM graph_store_items
WHERE tenant_id = :tenant_id AND memory_id = :memory_id

-- name: upsert_store_item
INSERT INTO graph_store_items (
    tenant_id, namespace, key, memory_id, value, vector, created_at, updated_at, ttl_minutes,
    expires_at
)
VALUES (
    :tenant_id, :namespace, :key, :memory_id, :value, :vector, :created_at, :updated_at,
    :ttl_minutes, :expires_at
)
ON CONFLICT (tenant_id, namespace, key) DO UPDATE
SET memory_id = excluded.memory_id, value = excluded.value, vector = excluded.vector,
    updated_at = excluded.updated_at, ttl_minutes = excluded.ttl_minutes,
    expires_at = excluded.expires_at

-- name: delete_store_item
DELETE FROM graph_store_items
WHERE tenant_id = :tenant_id AND namespace = :namespace AND key = :key
RETURNING memory_id

-- name: list_store_items
-- Live items in :namespace or below it (:below is the namespace and its separator), newest
-- first, after the (updated_at, namespace, key) cursor of the previous page.
SELECT namespace, key, memory_id, value, vector, created_at, updated_at, ttl_minutes,
       expires_at
FROM graph_store_items
WHERE tenant_id = :tenant_id
  AND (:namespace = '' OR namespace = :namespace
       OR substr(namespace, 1, length(:below)) = :below)
  AND (expires_at IS NULL OR expires_at > :now)
ORDER BY updated_at DESC, namespace, key
LIMIT :limit OFFSET :offset

-- name: list_store_namespaces
SELECT DISTINCT namespace FROM graph_store_items
WHERE tenant_id = :tenant_id AND (expires_at IS NULL OR expires_at > :now)
ORDER BY namespace

-- name: refresh_store_item
UPDATE graph_store_items SET expires_at = :expires_at
WHERE tenant_id = :tenant_id AND namespace = :namespace AND key = :key
  AND ttl_minutes IS NOT NULL

-- name: list_expired_store_items
SELECT namespace, key, memory_id FROM graph_store_items
WHERE tenant_id = :tenant_id AND expires_at <= :now
ORDER BY expires_at
LIMIT :limit
