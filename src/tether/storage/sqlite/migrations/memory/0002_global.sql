-- memory 0002: global memory lives in the reserved tenant '_global' (no real tenant id can
-- start with '_'); every tenant reads it in recall, only administrators write it. And the
-- full-text index stems words.

INSERT INTO tenants (tenant_id, name, created_at, created_by)
VALUES ('_global', 'global memory', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'system')
ON CONFLICT (tenant_id) DO NOTHING;

-- The full-text index stems words (Porter, after unicode61 folding), so "camping" finds
-- "camp" and "painted" finds "paint". Rebuilt with the same row ids, which memories
-- reference (fts_rowid).
CREATE VIRTUAL TABLE memory_fts_stemmed USING fts5 (
    text, scope_token, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts_stemmed (rowid, text, scope_token)
SELECT rowid, text, scope_token FROM memory_fts;
DROP TABLE memory_fts;
ALTER TABLE memory_fts_stemmed RENAME TO memory_fts;
