-- Named queries of governed memory (SQLite) where its SQL differs from
-- storage/queries/memory.sql, or that only SQLite has. Parameters use :name.
-- Scope lists arrive as a JSON array of 'scope:scope_id' strings.

-- name: insert_memory_fts
INSERT INTO memory_fts (terms, context) VALUES (:terms, :context);

-- name: delete_memory_fts
DELETE FROM memory_fts WHERE rowid = :fts_rowid;

-- name: insert_memory
INSERT INTO memories (tenant_id, memory_id, scope, scope_id, subjects, kind, fact_key, text,
                      tags, source_type, source_ref, source_version, created_by, approved_by,
                      confidence, sensitivity, valid_from, valid_to, created_at, updated_at,
                      expires_at, supersedes, superseded_by, superseded_at, access_count,
                      last_access, status, purge_after, fts_rowid, index_context, episode,
                      contradicted_at)
VALUES (:tenant_id, :memory_id, :scope, :scope_id, :subjects, :kind, :fact_key, :text,
        :tags, :source_type, :source_ref, :source_version, :created_by, :approved_by,
        :confidence, :sensitivity, :valid_from, :valid_to, :created_at, :updated_at,
        :expires_at, :supersedes, :superseded_by, :superseded_at, :access_count,
        :last_access, :status, :purge_after, :fts_rowid, :index_context, :episode,
        :contradicted_at);

-- name: get_memories
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND memory_id IN (SELECT value FROM json_each(:memory_ids));

-- name: get_memory_candidates
-- get_memories, returning only the columns recall ranks by.
SELECT m.tenant_id, m.memory_id, m.scope, m.sensitivity, m.kind, m.status, m.tags, m.confidence,
       m.access_count, m.valid_from, m.valid_to, m.expires_at, m.episode, m.contradicted_at, m.text
FROM memories m
WHERE m.tenant_id = :tenant_id AND m.memory_id IN (SELECT value FROM json_each(:memory_ids));

-- name: list_memories
SELECT * FROM memories
WHERE tenant_id = :tenant_id
  AND scope || ':' || scope_id IN (SELECT value FROM json_each(:scopes))
  AND status IN (SELECT value FROM json_each(:statuses))
ORDER BY created_at, memory_id
LIMIT :limit;

-- name: search_memories_text
-- The match names only terms of the tenant's scopes (each word behind its scope's prefix),
-- so the index's own top hits are in scope; the join re-checks tenant and scope. A word of
-- the memory's context counts half a word of its text (as on PostgreSQL, memory 0008).
-- Only the columns recall ranks by are returned (a candidate, not a record).
WITH hits AS (
    SELECT rowid, bm25(memory_fts, 1.0, 0.5) AS rank
    FROM memory_fts
    WHERE memory_fts MATCH :match
    ORDER BY rank
    LIMIT :limit
)
SELECT m.tenant_id, m.memory_id, m.scope, m.sensitivity, m.kind, m.status, m.tags, m.confidence,
       m.access_count, m.valid_from, m.valid_to, m.expires_at, m.episode, m.contradicted_at, m.text,
       -hits.rank AS lexical_score
FROM hits JOIN memories m ON m.fts_rowid = hits.rowid
WHERE m.tenant_id = :tenant_id
  AND m.scope || ':' || m.scope_id IN (SELECT value FROM json_each(:scopes))
ORDER BY hits.rank;

-- name: count_memory_terms
-- How many memories hold each index term (a JSON array of quoted terms), counted up to one
-- past :common: FTS5 reads a term's rows in rowid order, so the count stops there.
SELECT term.key AS position,
       (SELECT count(*) FROM (
            SELECT rowid FROM memory_fts WHERE memory_fts MATCH term.value LIMIT :common + 1
       )) AS memories
FROM json_each(:terms) AS term;

-- name: match_memories_text
-- Unranked: every candidate is checked by the caller, so bm25 is not computed; only what
-- the near-duplicate check compares is returned.
WITH hits AS (
    SELECT rowid FROM memory_fts WHERE memory_fts MATCH :match LIMIT :limit
)
SELECT m.memory_id, m.text, m.kind, m.status
FROM hits JOIN memories m ON m.fts_rowid = hits.rowid
WHERE m.tenant_id = :tenant_id
  AND m.scope || ':' || m.scope_id IN (SELECT value FROM json_each(:scopes));

-- name: insert_memory_subject
INSERT OR IGNORE INTO memory_subjects (tenant_id, subject_id, memory_id)
VALUES (:tenant_id, :subject_id, :memory_id);

-- name: list_scope_vectors
SELECT v.memory_id, v.vector FROM memory_vectors v
JOIN memories m ON m.tenant_id = v.tenant_id AND m.memory_id = v.memory_id
WHERE v.tenant_id = :tenant_id AND v.embedder_id = :embedder_id
  AND m.scope || ':' || m.scope_id IN (SELECT value FROM json_each(:scopes));

-- name: list_memories_for_tenant
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND status IN (SELECT value FROM json_each(:statuses))
ORDER BY created_at, memory_id
LIMIT :limit;

-- name: list_active_constraints
SELECT * FROM memories
INDEXED BY memories_by_kind
WHERE tenant_id = :tenant_id AND kind = 'constraint' AND status = 'active'
  AND scope || ':' || scope_id IN (SELECT value FROM json_each(:scopes))
ORDER BY created_at, memory_id;

-- name: scope_vector_versions
SELECT scope_token, version FROM memory_scope_versions
WHERE tenant_id = :tenant_id AND scope_token IN (SELECT value FROM json_each(:scopes));

-- name: list_memory_recalls
-- The recall log, newest first: by whom, or which returned a memory (ids are quoted in
-- the canonical JSON list, so the LIKE pattern matches one whole id); a page continues
-- below the recall before_id.
SELECT * FROM memory_recalls
WHERE tenant_id = :tenant_id
  AND (:principal_id IS NULL OR principal_id = :principal_id)
  AND (:returned_like IS NULL OR returned LIKE :returned_like)
  AND (:before_id IS NULL OR (at, recall_id) < (
        SELECT at, recall_id FROM memory_recalls
        WHERE tenant_id = :tenant_id AND recall_id = :before_id))
ORDER BY at DESC, recall_id DESC
LIMIT :limit;
