-- Named queries of governed memory (SQLite). Parameters use :name.
-- Scope lists arrive as a JSON array of 'scope:scope_id' strings.

-- name: insert_memory_fts
INSERT INTO memory_fts (terms) VALUES (:terms);

-- name: delete_memory_fts
DELETE FROM memory_fts WHERE rowid = :fts_rowid;

-- name: insert_memory
INSERT INTO memories (tenant_id, memory_id, scope, scope_id, subjects, kind, fact_key, text,
                      tags, source_type, source_ref, source_version, created_by, approved_by,
                      confidence, sensitivity, valid_from, valid_to, created_at, updated_at,
                      expires_at, supersedes, superseded_by, superseded_at, access_count,
                      last_access, status, purge_after, fts_rowid)
VALUES (:tenant_id, :memory_id, :scope, :scope_id, :subjects, :kind, :fact_key, :text,
        :tags, :source_type, :source_ref, :source_version, :created_by, :approved_by,
        :confidence, :sensitivity, :valid_from, :valid_to, :created_at, :updated_at,
        :expires_at, :supersedes, :superseded_by, :superseded_at, :access_count,
        :last_access, :status, :purge_after, :fts_rowid);

-- name: update_memory
UPDATE memories
SET status = :status, superseded_by = :superseded_by, superseded_at = :superseded_at,
    valid_to = :valid_to, confidence = :confidence, updated_at = :updated_at,
    expires_at = :expires_at, purge_after = :purge_after, approved_by = :approved_by,
    fact_key = :fact_key
WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: get_memory
SELECT * FROM memories WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: get_memories
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND memory_id IN (SELECT value FROM json_each(:memory_ids));

-- name: list_memories
SELECT * FROM memories
WHERE tenant_id = :tenant_id
  AND scope || ':' || scope_id IN (SELECT value FROM json_each(:scopes))
  AND status IN (SELECT value FROM json_each(:statuses))
ORDER BY created_at, memory_id
LIMIT :limit;

-- name: list_memories_by_fact_key
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND scope = :scope AND scope_id = :scope_id
  AND fact_key = :fact_key
ORDER BY created_at, memory_id;

-- name: list_memories_by_source
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND source_ref = :source_ref AND status = 'active'
  AND (source_version IS NULL OR source_version != :source_version);

-- name: search_memories_text
-- The match names only terms of the tenant's scopes (each word behind its scope's prefix),
-- so the index's own top hits are in scope; the join re-checks tenant and scope.
WITH hits AS (
    SELECT rowid, bm25(memory_fts) AS rank
    FROM memory_fts
    WHERE memory_fts MATCH :match
    ORDER BY rank
    LIMIT :limit
)
SELECT m.*, -hits.rank AS lexical_score
FROM hits JOIN memories m ON m.fts_rowid = hits.rowid
WHERE m.tenant_id = :tenant_id
  AND m.scope || ':' || m.scope_id IN (SELECT value FROM json_each(:scopes))
ORDER BY hits.rank;

-- name: match_memories_text
-- Unranked: every candidate is checked by the caller, so bm25 is not computed.
WITH hits AS (
    SELECT rowid FROM memory_fts WHERE memory_fts MATCH :match LIMIT :limit
)
SELECT m.*, 0.0 AS lexical_score
FROM hits JOIN memories m ON m.fts_rowid = hits.rowid
WHERE m.tenant_id = :tenant_id
  AND m.scope || ':' || m.scope_id IN (SELECT value FROM json_each(:scopes));

-- name: insert_memory_subject
INSERT OR IGNORE INTO memory_subjects (tenant_id, subject_id, memory_id)
VALUES (:tenant_id, :subject_id, :memory_id);

-- name: list_subject_memories
SELECT m.* FROM memories m
WHERE m.tenant_id = :tenant_id
  AND (m.memory_id IN (SELECT memory_id FROM memory_subjects
                       WHERE tenant_id = :tenant_id AND subject_id = :subject_id)
       OR (m.scope = 'user' AND m.scope_id = :subject_id))
ORDER BY m.created_at;

-- name: delete_memory
DELETE FROM memories WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: delete_memory_subjects
DELETE FROM memory_subjects WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: upsert_memory_vector
INSERT INTO memory_vectors (tenant_id, memory_id, embedder_id, part, dim, vector)
VALUES (:tenant_id, :memory_id, :embedder_id, :part, :dim, :vector)
ON CONFLICT (tenant_id, memory_id, embedder_id, part) DO UPDATE
SET dim = excluded.dim, vector = excluded.vector;

-- name: delete_memory_part_vectors
DELETE FROM memory_vectors
WHERE tenant_id = :tenant_id AND memory_id = :memory_id AND embedder_id = :embedder_id
  AND part > 0;

-- name: delete_memory_vectors
DELETE FROM memory_vectors WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: list_scope_vectors
SELECT v.memory_id, v.vector FROM memory_vectors v
JOIN memories m ON m.tenant_id = v.tenant_id AND m.memory_id = v.memory_id
WHERE v.tenant_id = :tenant_id AND v.embedder_id = :embedder_id
  AND m.scope || ':' || m.scope_id IN (SELECT value FROM json_each(:scopes));

-- name: insert_memory_decision
INSERT INTO memory_decisions (tenant_id, decision_id, at, principal_id, verdict, reasons,
                              findings, text_digest, subject_hashes, memory_id, run_id)
VALUES (:tenant_id, :decision_id, :at, :principal_id, :verdict, :reasons, :findings,
        :text_digest, :subject_hashes, :memory_id, :run_id);

-- name: delete_memory_decisions_for
DELETE FROM memory_decisions
WHERE tenant_id = :tenant_id
  AND (memory_id = :memory_id OR subject_hashes LIKE '%' || :subject_hash || '%');

-- name: insert_memory_recall
INSERT INTO memory_recalls (tenant_id, recall_id, at, principal_id, query_digest, scopes, returned)
VALUES (:tenant_id, :recall_id, :at, :principal_id, :query_digest, :scopes, :returned);

-- name: bump_memory_access
UPDATE memories SET access_count = access_count + :hits, last_access = :at
WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: upsert_memory_consent
INSERT INTO memory_consents (tenant_id, user_id, purpose, granted_at, revoked_at)
VALUES (:tenant_id, :user_id, :purpose, :granted_at, :revoked_at)
ON CONFLICT (tenant_id, user_id, purpose) DO UPDATE
SET granted_at = excluded.granted_at, revoked_at = excluded.revoked_at;

-- name: get_memory_consent
SELECT * FROM memory_consents
WHERE tenant_id = :tenant_id AND user_id = :user_id AND purpose = :purpose;

-- name: count_run_memories
SELECT COUNT(*) AS n FROM memory_decisions
WHERE tenant_id = :tenant_id AND run_id = :run_id AND verdict = 'allowed';

-- name: insert_memory_hold
INSERT INTO memory_holds (tenant_id, hold_id, scope, scope_id, reason, created_at, created_by, released_at)
VALUES (:tenant_id, :hold_id, :scope, :scope_id, :reason, :created_at, :created_by, NULL);

-- name: list_memory_holds
SELECT * FROM memory_holds WHERE tenant_id = :tenant_id AND released_at IS NULL;

-- name: insert_memory_tombstone
INSERT INTO memory_tombstones (tenant_id, tombstone_id, subject_hash, erased_at, erased_by, counts)
VALUES (:tenant_id, :tombstone_id, :subject_hash, :erased_at, :erased_by, :counts);

-- name: list_memories_due
SELECT * FROM memories
WHERE tenant_id = :tenant_id
  AND ((status = 'active' AND expires_at IS NOT NULL AND expires_at <= :now)
       OR (status IN ('superseded', 'forgotten', 'expired', 'invalidated')
           AND purge_after IS NOT NULL AND purge_after <= :now)
       OR (status = 'active' AND kind != 'constraint'))
ORDER BY created_at
LIMIT :limit;

-- name: get_memory_policy
SELECT config FROM memory_policies WHERE tenant_id = :tenant_id;

-- name: upsert_memory_policy
INSERT INTO memory_policies (tenant_id, config, updated_at, updated_by)
VALUES (:tenant_id, :config, :updated_at, :updated_by)
ON CONFLICT (tenant_id) DO UPDATE
SET config = excluded.config, updated_at = excluded.updated_at, updated_by = excluded.updated_by;

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

-- name: bump_scope_vectors
INSERT INTO memory_scope_versions (tenant_id, scope_token, version)
VALUES (:tenant_id, :scope_token, 1)
ON CONFLICT (tenant_id, scope_token) DO UPDATE SET version = memory_scope_versions.version + 1;

-- name: scope_vector_versions
SELECT scope_token, version FROM memory_scope_versions
WHERE tenant_id = :tenant_id AND scope_token IN (SELECT value FROM json_each(:scopes));
