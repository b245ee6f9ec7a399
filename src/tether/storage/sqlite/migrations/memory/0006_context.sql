-- memory 0006: a memory is indexed with the context it came from (index text never
-- returned as its text: e.g. the neighbouring turns of its conversation), remembers the
-- session or thread it came from (`episode`: recall weighs the memories of one together)
-- and when it was last contradicted (recall leaves out a contradicted memory whose
-- confidence fell below the tenant's threshold). The full-text index gains a second
-- column, `context`, ranked at a lower weight than the memory's own words; existing
-- entries keep their terms and get an empty context.
ALTER TABLE memories ADD COLUMN index_context TEXT;
ALTER TABLE memories ADD COLUMN episode TEXT;
ALTER TABLE memories ADD COLUMN contradicted_at TEXT;
CREATE VIRTUAL TABLE memory_fts_context USING fts5 (
    terms, context, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts_context (rowid, terms, context)
SELECT rowid, terms, '' FROM memory_fts;
DROP TABLE memory_fts;
ALTER TABLE memory_fts_context RENAME TO memory_fts;
