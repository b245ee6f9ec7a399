-- Named queries of governed memory, the same on SQLite and PostgreSQL.
-- Parameters use :name; the PostgreSQL backend reads them as %(name)s.

-- name: update_memory
UPDATE memories
SET status = :status, superseded_by = :superseded_by, superseded_at = :superseded_at,
    valid_to = :valid_to, confidence = :confidence, updated_at = :updated_at,
    expires_at = :expires_at, purge_after = :purge_after, approved_by = :approved_by,
    fact_key = :fact_key, contradicted_at = :contradicted_at
WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: get_memory
SELECT * FROM memories WHERE tenant_id = :tenant_id AND memory_id = :memory_id;

-- name: list_memories_by_fact_key
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND scope = :scope AND scope_id = :scope_id
  AND fact_key = :fact_key
ORDER BY created_at, memory_id;

-- name: list_memories_by_source
SELECT * FROM memories
WHERE tenant_id = :tenant_id AND source_ref = :source_ref AND status = 'active'
  AND (source_version IS NULL OR source_version != :source_version);

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

-- name: bump_scope_vectors
INSERT INTO memory_scope_versions (tenant_id, scope_token, version)
VALUES (:tenant_id, :scope_token, 1)
ON CONFLICT (tenant_id, scope_token) DO UPDATE SET version = memory_scope_versions.version + 1;
