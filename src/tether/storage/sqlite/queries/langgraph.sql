-- name: list_graph_checkpoints
-- Newest first; '' (and :any_ns = 1) leave a criterion out. :filter is a JSON object whose
-- every key must hold the same value in the checkpoint's metadata.
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
       blob_channels, inline_type, inline_data
FROM graph_checkpoints
WHERE tenant_id = :tenant_id
  AND (:thread_id = '' OR thread_id = :thread_id)
  AND (:any_ns = 1 OR checkpoint_ns = :checkpoint_ns)
  AND (:checkpoint_id = '' OR checkpoint_id = :checkpoint_id)
  AND (:before = '' OR checkpoint_id < :before)
  AND NOT EXISTS (
      SELECT 1 FROM json_each(:filter) f
      WHERE json_extract(graph_checkpoints.metadata, '$."' || f.key || '"') IS NOT f.value
  )
ORDER BY checkpoint_id DESC
LIMIT :limit

-- name: read_latest_graph_checkpoint
-- The namespace's latest checkpoint and its pending writes in one statement (one
-- snapshot, no transaction to open): a row per write in the order live execution applies
-- them, or one row with the write columns NULL.
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint,
       c.metadata, c.blob_channels, c.inline_type, c.inline_data,
       w.task_id, w.idx, w.channel, w.type, w.data, w.task_path
FROM (
    SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint,
           metadata, blob_channels, inline_type, inline_data
    FROM graph_checkpoints
    WHERE tenant_id = :tenant_id AND thread_id = :thread_id
      AND checkpoint_ns = :checkpoint_ns
    ORDER BY checkpoint_id DESC
    LIMIT 1
) c
LEFT JOIN graph_writes w
  ON w.tenant_id = :tenant_id AND w.thread_id = c.thread_id
 AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
ORDER BY w.task_path, w.task_id, w.idx

-- name: read_graph_checkpoint
-- The checkpoint :checkpoint_id and its pending writes, as read_latest_graph_checkpoint.
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint,
       c.metadata, c.blob_channels, c.inline_type, c.inline_data,
       w.task_id, w.idx, w.channel, w.type, w.data, w.task_path
FROM graph_checkpoints c
LEFT JOIN graph_writes w
  ON w.tenant_id = c.tenant_id AND w.thread_id = c.thread_id
 AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
WHERE c.tenant_id = :tenant_id AND c.thread_id = :thread_id
  AND c.checkpoint_ns = :checkpoint_ns AND c.checkpoint_id = :checkpoint_id
ORDER BY w.task_path, w.task_id, w.idx
