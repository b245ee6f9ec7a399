-- Named queries of governed memory (PostgreSQL). Parameters use %(name)s.
-- Scope lists arrive as arrays of 'scope:scope_id' strings.

-- name: insert_memory
INSERT INTO memories (tenant_id, memory_id, scope, scope_id, subjects, kind, fact_key, text,
                      tags, source_type, source_ref, source_version, created_by, approved_by,
                      confidence, sensitivity, valid_from, valid_to, created_at, updated_at,
                      expires_at, supersedes, superseded_by, superseded_at, access_count,
                      last_access, status, purge_after, tsv)
VALUES (%(tenant_id)s, %(memory_id)s, %(scope)s, %(scope_id)s, %(subjects)s, %(kind)s, %(fact_key)s, %(text)s,
        %(tags)s, %(source_type)s, %(source_ref)s, %(source_version)s, %(created_by)s, %(approved_by)s,
        %(confidence)s, %(sensitivity)s, %(valid_from)s, %(valid_to)s, %(created_at)s, %(updated_at)s,
        %(expires_at)s, %(supersedes)s, %(superseded_by)s, %(superseded_at)s, %(access_count)s,
        %(last_access)s, %(status)s, %(purge_after)s, to_tsvector('english', %(text)s));

-- name: update_memory
UPDATE memories
SET status = %(status)s, superseded_by = %(superseded_by)s, superseded_at = %(superseded_at)s,
    valid_to = %(valid_to)s, confidence = %(confidence)s, updated_at = %(updated_at)s,
    expires_at = %(expires_at)s, purge_after = %(purge_after)s, approved_by = %(approved_by)s,
    fact_key = %(fact_key)s
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s;

-- name: get_memory
SELECT * FROM memories WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s;

-- name: get_memories
-- One primary-key probe per id, whatever the planner believes of the table (a tenant
-- equality next to the row-level policy's looks like two rows without statistics).
SELECT m.* FROM (SELECT DISTINCT unnest(%(memory_ids)s::text[])) AS wanted (memory_id)
CROSS JOIN LATERAL (
    SELECT * FROM memories
    WHERE tenant_id = %(tenant_id)s AND memory_id = wanted.memory_id
    LIMIT 1
) AS m;

-- name: list_memories
SELECT * FROM memories
WHERE tenant_id = %(tenant_id)s
  AND scope || ':' || scope_id = ANY(%(scopes)s::text[])
  AND status = ANY(%(statuses)s::text[])
ORDER BY created_at, memory_id
LIMIT %(limit)s;

-- name: list_memories_by_fact_key
SELECT * FROM memories
WHERE tenant_id = %(tenant_id)s AND scope = %(scope)s AND scope_id = %(scope_id)s
  AND fact_key = %(fact_key)s
ORDER BY created_at, memory_id;

-- name: list_memories_by_source
SELECT * FROM memories
WHERE tenant_id = %(tenant_id)s AND source_ref = %(source_ref)s AND status = 'active'
  AND (source_version IS NULL OR source_version != %(source_version)s);

-- name: search_memories_text
-- Candidates come from memory_terms by text equality (under row-level security the GIN
-- index on tsv is never used: @@ is not leakproof). Their summed term weights order them
-- as ts_rank would (memory 0004), so only the best few are read, by primary key, and
-- ranked; twice the limit leaves room for rounding between the two.
WITH hits AS (
    SELECT t.memory_id, sum(t.weight) AS weight FROM memory_terms t
    WHERE t.tenant_id = %(tenant_id)s AND t.scope_key = ANY(%(scopes)s::text[])
      AND t.term = ANY(tsvector_to_array(to_tsvector('english', translate(%(match)s, '()&|!', '     '))))
    GROUP BY t.memory_id
    ORDER BY weight DESC, t.memory_id
    LIMIT 2 * %(limit)s
)
SELECT m.*, ts_rank(m.tsv, to_tsquery('english', %(match)s)) AS lexical_score
FROM hits
CROSS JOIN LATERAL (
    SELECT * FROM memories
    WHERE tenant_id = %(tenant_id)s AND memory_id = hits.memory_id
    LIMIT 1
) AS m
WHERE m.tsv @@ to_tsquery('english', %(match)s)
  AND m.scope || ':' || m.scope_id = ANY(%(scopes)s::text[])
ORDER BY lexical_score DESC, m.memory_id
LIMIT %(limit)s;

-- name: match_memories_text
-- Unranked: every candidate is checked by the caller. Candidates as search_memories_text's.
WITH hits AS (
    SELECT DISTINCT t.memory_id FROM memory_terms t
    WHERE t.tenant_id = %(tenant_id)s AND t.scope_key = ANY(%(scopes)s::text[])
      AND t.term = ANY(tsvector_to_array(to_tsvector('english', translate(%(match)s, '()&|!', '     '))))
)
SELECT m.*, 0.0 AS lexical_score
FROM hits
CROSS JOIN LATERAL (
    SELECT * FROM memories
    WHERE tenant_id = %(tenant_id)s AND memory_id = hits.memory_id
    LIMIT 1
) AS m
WHERE m.tsv @@ to_tsquery('english', %(match)s)
  AND m.scope || ':' || m.scope_id = ANY(%(scopes)s::text[])
LIMIT %(limit)s;

-- name: insert_memory_subject
INSERT INTO memory_subjects (tenant_id, subject_id, memory_id)
VALUES (%(tenant_id)s, %(subject_id)s, %(memory_id)s)
ON CONFLICT DO NOTHING;

-- name: list_subject_memories
SELECT m.* FROM memories m
WHERE m.tenant_id = %(tenant_id)s
  AND (m.memory_id IN (SELECT memory_id FROM memory_subjects
                       WHERE tenant_id = %(tenant_id)s AND subject_id = %(subject_id)s)
       OR (m.scope = 'user' AND m.scope_id = %(subject_id)s))
ORDER BY m.created_at;

-- name: delete_memory
DELETE FROM memories WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s;

-- name: delete_memory_subjects
DELETE FROM memory_subjects WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s;

-- name: upsert_memory_vector
INSERT INTO memory_vectors (tenant_id, memory_id, embedder_id, part, dim, vector)
VALUES (%(tenant_id)s, %(memory_id)s, %(embedder_id)s, %(part)s, %(dim)s, %(vector)s)
ON CONFLICT (tenant_id, memory_id, embedder_id, part) DO UPDATE
SET dim = excluded.dim, vector = excluded.vector;

-- name: delete_memory_part_vectors
DELETE FROM memory_vectors
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
  AND embedder_id = %(embedder_id)s AND part > 0;

-- name: delete_memory_vectors
DELETE FROM memory_vectors WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s;

-- name: list_scope_vectors
-- The scopes' memories, then one primary-key range probe per memory for its vectors
-- (the whole text and its sentences): linear whatever the statistics say (a plain join
-- planned on none, with a tenant equality next to the row-level policy's, became a
-- nested loop re-scanning the tenant per row).
SELECT v.memory_id, v.vector FROM memories m
CROSS JOIN LATERAL (
    SELECT mv.memory_id, mv.vector FROM memory_vectors mv
    WHERE mv.tenant_id = %(tenant_id)s AND mv.memory_id = m.memory_id
      AND mv.embedder_id = %(embedder_id)s
) AS v
WHERE m.tenant_id = %(tenant_id)s
  AND m.scope || ':' || m.scope_id = ANY(%(scopes)s::text[]);

-- name: insert_memory_decision
INSERT INTO memory_decisions (tenant_id, decision_id, at, principal_id, verdict, reasons,
                              findings, text_digest, subject_hashes, memory_id, run_id)
VALUES (%(tenant_id)s, %(decision_id)s, %(at)s, %(principal_id)s, %(verdict)s, %(reasons)s, %(findings)s,
        %(text_digest)s, %(subject_hashes)s, %(memory_id)s, %(run_id)s);

-- name: delete_memory_decisions_for
DELETE FROM memory_decisions
WHERE tenant_id = %(tenant_id)s
  AND (memory_id = %(memory_id)s OR subject_hashes LIKE '%%' || %(subject_hash)s || '%%');

-- name: insert_memory_recall
INSERT INTO memory_recalls (tenant_id, recall_id, at, principal_id, query_digest, scopes, returned)
VALUES (%(tenant_id)s, %(recall_id)s, %(at)s, %(principal_id)s, %(query_digest)s, %(scopes)s, %(returned)s);

-- name: bump_memory_access
UPDATE memories SET access_count = access_count + %(hits)s, last_access = %(at)s
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s;

-- name: upsert_memory_consent
INSERT INTO memory_consents (tenant_id, user_id, purpose, granted_at, revoked_at)
VALUES (%(tenant_id)s, %(user_id)s, %(purpose)s, %(granted_at)s, %(revoked_at)s)
ON CONFLICT (tenant_id, user_id, purpose) DO UPDATE
SET granted_at = excluded.granted_at, revoked_at = excluded.revoked_at;

-- name: get_memory_consent
SELECT * FROM memory_consents
WHERE tenant_id = %(tenant_id)s AND user_id = %(user_id)s AND purpose = %(purpose)s;

-- name: count_run_memories
SELECT COUNT(*) AS n FROM memory_decisions
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND verdict = 'allowed';

-- name: insert_memory_hold
INSERT INTO memory_holds (tenant_id, hold_id, scope, scope_id, reason, created_at, created_by, released_at)
VALUES (%(tenant_id)s, %(hold_id)s, %(scope)s, %(scope_id)s, %(reason)s, %(created_at)s, %(created_by)s, NULL);

-- name: list_memory_holds
SELECT * FROM memory_holds WHERE tenant_id = %(tenant_id)s AND released_at IS NULL;

-- name: insert_memory_tombstone
INSERT INTO memory_tombstones (tenant_id, tombstone_id, subject_hash, erased_at, erased_by, counts)
VALUES (%(tenant_id)s, %(tombstone_id)s, %(subject_hash)s, %(erased_at)s, %(erased_by)s, %(counts)s);

-- name: list_memories_due
SELECT * FROM memories
WHERE tenant_id = %(tenant_id)s
  AND ((status = 'active' AND expires_at IS NOT NULL AND expires_at <= %(now)s)
       OR (status IN ('superseded', 'forgotten', 'expired', 'invalidated')
           AND purge_after IS NOT NULL AND purge_after <= %(now)s)
       OR (status = 'active' AND kind != 'constraint'))
ORDER BY created_at
LIMIT %(limit)s;

-- name: get_memory_policy
SELECT config FROM memory_policies WHERE tenant_id = %(tenant_id)s;

-- name: upsert_memory_policy
INSERT INTO memory_policies (tenant_id, config, updated_at, updated_by)
VALUES (%(tenant_id)s, %(config)s, %(updated_at)s, %(updated_by)s)
ON CONFLICT (tenant_id) DO UPDATE
SET config = excluded.config, updated_at = excluded.updated_at, updated_by = excluded.updated_by;

-- name: list_memories_for_tenant
SELECT * FROM memories
WHERE tenant_id = %(tenant_id)s AND status = ANY(%(statuses)s::text[])
ORDER BY created_at, memory_id
LIMIT %(limit)s;

-- name: list_active_constraints
SELECT * FROM memories
WHERE tenant_id = %(tenant_id)s AND kind = 'constraint' AND status = 'active'
  AND scope || ':' || scope_id = ANY(%(scopes)s::text[])
ORDER BY created_at, memory_id;

-- name: bump_scope_vectors
INSERT INTO memory_scope_versions (tenant_id, scope_token, version)
VALUES (%(tenant_id)s, %(scope_token)s, 1)
ON CONFLICT (tenant_id, scope_token) DO UPDATE SET version = memory_scope_versions.version + 1;

-- name: scope_vector_versions
SELECT scope_token, version FROM memory_scope_versions
WHERE tenant_id = %(tenant_id)s AND scope_token = ANY(%(scopes)s::text[]);
