-- memory 0003: the full-text index holds each word behind its scope's prefix (one column,
-- `terms`), instead of the words plus a scope-wide token. A search then reads only its
-- scopes' posting lists and bm25's document frequencies are the scope's own, where the
-- scope token made every ranked search count every document of the scope.
-- tether_scoped_terms is registered on every connection by the SQLite backend.
CREATE VIRTUAL TABLE memory_fts_scoped USING fts5 (
    terms, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts_scoped (rowid, terms)
SELECT m.fts_rowid, tether_scoped_terms(m.tenant_id, m.scope || ':' || m.scope_id, m.text)
FROM memories m
WHERE m.fts_rowid IS NOT NULL;
DROP TABLE memory_fts;
ALTER TABLE memory_fts_scoped RENAME TO memory_fts;
