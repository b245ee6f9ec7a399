-- Named queries of governed memory (PostgreSQL) where its SQL differs from
-- storage/queries/memory.sql, or that only PostgreSQL has. Parameters use %(name)s.
-- Scope lists arrive as arrays of 'scope:scope_id' strings.

-- name: insert_memory
INSERT INTO memories (tenant_id, memory_id, scope, scope_id, subjects, kind, fact_key, text,
                      tags, source_type, source_ref, source_version, created_by, approved_by,
                      confidence, sensitivity, valid_from, valid_to, created_at, updated_at,
                      expires_at, supersedes, superseded_by, superseded_at, access_count,
                      last_access, status, purge_after, index_context, episode, contradicted_at,
                      tsv)
VALUES (%(tenant_id)s, %(memory_id)s, %(scope)s, %(scope_id)s, %(subjects)s, %(kind)s, %(fact_key)s, %(text)s,
        %(tags)s, %(source_type)s, %(source_ref)s, %(source_version)s, %(created_by)s, %(approved_by)s,
        %(confidence)s, %(sensitivity)s, %(valid_from)s, %(valid_to)s, %(created_at)s, %(updated_at)s,
        %(expires_at)s, %(supersedes)s, %(superseded_by)s, %(superseded_at)s, %(access_count)s,
        %(last_access)s, %(status)s, %(purge_after)s, %(index_context)s, %(episode)s,
        %(contradicted_at)s,
        to_tsvector('tether_english', %(text)s)
        || setweight(to_tsvector('tether_english', coalesce(%(index_context)s, '')), 'C'));

-- name: get_memories
-- One primary-key probe per id, whatever the planner believes of the table (a tenant
-- equality next to the row-level policy's looks like two rows without statistics).
SELECT m.* FROM (SELECT DISTINCT unnest(%(memory_ids)s::text[])) AS wanted (memory_id)
CROSS JOIN LATERAL (
    SELECT * FROM memories
    WHERE tenant_id = %(tenant_id)s AND memory_id = wanted.memory_id
    LIMIT 1
) AS m;

-- name: get_memory_candidates
-- get_memories' probes, returning only the columns recall ranks by.
SELECT m.tenant_id, m.memory_id, m.scope, m.sensitivity, m.kind, m.status, m.tags, m.confidence,
       m.access_count, m.valid_from, m.valid_to, m.expires_at, m.episode, m.contradicted_at, m.text
FROM (SELECT DISTINCT unnest(%(memory_ids)s::text[])) AS wanted (memory_id)
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

-- name: search_memories_text
-- Candidates come from memory_terms by text equality (under row-level security the GIN
-- index on tsv is never used: @@ is not leakproof), scored by bm25 as SQLite's FTS5
-- scores them (k1 1.2, b 0.75): for each matched lexeme, its inverse document frequency
-- ln((N - n + 0.5) / (n + 0.5)), clamped to 1e-6 when not above zero, times its count in
-- the memory (memory_terms.weight: the context's occurrences count half, as on SQLite),
-- saturated and normalised by the memory's indexed length against the average (memory
-- 0009). A lexeme's document frequency n is an index-only count of its posting list in
-- the scope (the rows the lookup reads anyway); N and the average length are the
-- tenant's, as FTS5 takes them over its whole index, summed over the tenant's few rows
-- that keep them (memory_term_totals, memory 0011: 16 shards at most): counting them per
-- query would cost a pass over every memory of the tenant. Each posting list is read by
-- its own index probe (OFFSET 0 keeps the planner from turning the probes into a join it
-- may plan as a scan of the tenant's terms when it has no statistics). The best few
-- memories are then read, by primary key; eight more than the limit leave room for any the
-- final match and scope re-check drop (none while memory_terms follows every insert and
-- delete; twice the limit cost a sixth more). Only the columns recall ranks by are returned (a
-- candidate, not a record: the tsvector and the timestamps recall does not read stay on
-- the server). A lexeme of more memories in its scope than the cut-off is left out when
-- another is not (tether.storage._memory_ops.COMMON_WORD_MEMORIES): each lexeme is first
-- counted up to one past that, and only when every lexeme passed it are all counted in full.
WITH words AS (
    SELECT key.scope_key, word.term, counted.df
    FROM unnest(%(scopes)s::text[]) AS key (scope_key)
    CROSS JOIN unnest(tsvector_to_array(to_tsvector('tether_english', translate(%(match)s, '()&|!', '     '))))
        AS word (term)
    CROSS JOIN LATERAL (
        SELECT count(*)::double precision AS df FROM (
            SELECT 1 FROM memory_terms t
            WHERE t.tenant_id = %(tenant_id)s AND t.scope_key = key.scope_key
              AND t.term = word.term
            LIMIT %(common)s + 1
        ) AS capped
    ) AS counted
    WHERE counted.df > 0
), terms AS (
    SELECT scope_key, term, df FROM words WHERE df <= %(common)s
    UNION ALL
    SELECT words.scope_key, words.term, whole.df
    FROM words CROSS JOIN LATERAL (
        SELECT count(*)::double precision AS df FROM memory_terms t
        WHERE t.tenant_id = %(tenant_id)s AND t.scope_key = words.scope_key AND t.term = words.term
    ) AS whole
    WHERE NOT EXISTS (SELECT 1 FROM words WHERE df <= %(common)s)
), totals AS (
    SELECT greatest(sum(memories), 1)::double precision AS memories,
           greatest(sum(length) / nullif(sum(memories), 0), 1.0) AS average
    FROM memory_term_totals WHERE tenant_id = %(tenant_id)s
), hits AS (
    SELECT t.memory_id,
           sum(greatest(ln(greatest(totals.memories - terms.df + 0.5, 0.5) / (terms.df + 0.5)),
                        1e-6)
               * t.weight * 2.2
               / (t.weight + 1.2 * (0.25 + 0.75 * t.length / totals.average)))
           AS score
    FROM terms CROSS JOIN totals
    CROSS JOIN LATERAL (
        SELECT memory_id, weight, length FROM memory_terms
        WHERE tenant_id = %(tenant_id)s AND scope_key = terms.scope_key AND term = terms.term
        OFFSET 0
    ) AS t
    GROUP BY t.memory_id
    ORDER BY score DESC, t.memory_id
    LIMIT %(limit)s + 8
)
SELECT m.tenant_id, m.memory_id, m.scope, m.sensitivity, m.kind, m.status, m.tags, m.confidence,
       m.access_count, m.valid_from, m.valid_to, m.expires_at, m.episode, m.contradicted_at, m.text,
       hits.score AS lexical_score
FROM hits
CROSS JOIN LATERAL (
    SELECT * FROM memories
    WHERE tenant_id = %(tenant_id)s AND memory_id = hits.memory_id
    LIMIT 1
) AS m
WHERE m.tsv @@ to_tsquery('tether_english', %(match)s)
  AND m.scope || ':' || m.scope_id = ANY(%(scopes)s::text[])
ORDER BY lexical_score DESC, m.memory_id
LIMIT %(limit)s;

-- name: match_memories_text
-- Unranked: every candidate is checked by the caller. The memories holding at least
-- %(at_least)s of the probe's words, counted in one pass over the words' posting lists (a
-- memory_terms row is one lexeme of one memory); two words of one stem are one lexeme, so
-- the count asked for drops by the words the stemmer merged or dropped (a superset: the
-- caller compares words). Only what the near-duplicate check compares is returned.
WITH probe AS (
    SELECT DISTINCT lexeme
    FROM unnest(tsvector_to_array(to_tsvector('tether_english', translate(%(match)s, '()&|!', '     '))))
        AS word (lexeme)
), hits AS (
    SELECT t.memory_id FROM probe
    CROSS JOIN LATERAL (
        SELECT memory_id FROM memory_terms
        WHERE tenant_id = %(tenant_id)s AND scope_key = ANY(%(scopes)s::text[])
          AND term = probe.lexeme
        OFFSET 0
    ) AS t
    GROUP BY t.memory_id
    HAVING count(*) >= %(at_least)s - (%(probe_words)s - (SELECT count(*) FROM probe))
    LIMIT %(limit)s
)
SELECT m.memory_id, m.text, m.kind, m.status
FROM hits
CROSS JOIN LATERAL (
    SELECT * FROM memories
    WHERE tenant_id = %(tenant_id)s AND memory_id = hits.memory_id
    LIMIT 1
) AS m
WHERE m.scope || ':' || m.scope_id = ANY(%(scopes)s::text[]);

-- name: insert_memory_subject
INSERT INTO memory_subjects (tenant_id, subject_id, memory_id)
VALUES (%(tenant_id)s, %(subject_id)s, %(memory_id)s)
ON CONFLICT DO NOTHING;

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

-- name: scope_vector_versions
SELECT scope_token, version FROM memory_scope_versions
WHERE tenant_id = %(tenant_id)s AND scope_token = ANY(%(scopes)s::text[]);

-- name: list_memory_recalls
-- The recall log, newest first: by whom, or which returned a memory (ids are quoted in
-- the canonical JSON list, so the LIKE pattern matches one whole id); a page continues
-- below the recall before_id.
SELECT * FROM memory_recalls
WHERE tenant_id = %(tenant_id)s
  AND (%(principal_id)s::text IS NULL OR principal_id = %(principal_id)s::text)
  AND (%(returned_like)s::text IS NULL OR returned LIKE %(returned_like)s::text)
  AND (%(before_id)s::text IS NULL OR (at, recall_id) < (
        SELECT at, recall_id FROM memory_recalls
        WHERE tenant_id = %(tenant_id)s AND recall_id = %(before_id)s::text))
ORDER BY at DESC, recall_id DESC
LIMIT %(limit)s;
