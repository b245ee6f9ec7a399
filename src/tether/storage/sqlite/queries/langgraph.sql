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
