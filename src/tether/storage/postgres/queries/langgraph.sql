-- name: list_graph_checkpoints
-- Newest first; '' (and :any_ns = 1) leave a criterion out. :filter is a JSON object the
-- checkpoint's metadata must contain.
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
       blob_channels, inline_type, inline_data
FROM graph_checkpoints
WHERE tenant_id = %(tenant_id)s
  AND (%(thread_id)s::text = '' OR thread_id = %(thread_id)s::text)
  AND (%(any_ns)s::integer = 1 OR checkpoint_ns = %(checkpoint_ns)s::text)
  AND (%(checkpoint_id)s::text = '' OR checkpoint_id = %(checkpoint_id)s::text)
  AND (%(before)s::text = '' OR checkpoint_id < %(before)s::text)
  AND (%(filter)s::text = '{}' OR metadata::jsonb @> %(filter)s::jsonb)
ORDER BY checkpoint_id DESC
LIMIT %(limit)s;
