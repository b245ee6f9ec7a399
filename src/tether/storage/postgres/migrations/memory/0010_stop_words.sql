-- memory 0010: the full-text index keeps stop words. The `english` configuration drops
-- PostgreSQL's list of them ("over", "while", "again", "after", "both"...) from both the
-- memory and the query, where SQLite's index keeps every word and recall's own list
-- (tether.memory.text.STOP_WORDS) decides which words a query is made of: "when did she
-- plan to go over" could not find "I'll come over tomorrow" on PostgreSQL alone. The
-- configuration `tether_english` stems with the same Snowball stemmer and no stop-word
-- list; every memory's tsvector and its memory_terms rows are rebuilt with it (row-level
-- security lifted from the two tables while they are, as in memory 0009).
CREATE TEXT SEARCH DICTIONARY tether_english_stem (TEMPLATE = snowball, LANGUAGE = english);
CREATE TEXT SEARCH CONFIGURATION tether_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION tether_english
    ALTER MAPPING REPLACE english_stem WITH tether_english_stem;

ALTER TABLE memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_terms NO FORCE ROW LEVEL SECURITY;
DELETE FROM memory_terms;
UPDATE memories SET tsv = to_tsvector('tether_english', text)
    || setweight(to_tsvector('tether_english', coalesce(index_context, '')), 'C');
INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight, length)
SELECT m.tenant_id, m.scope || ':' || m.scope_id, t.lexeme, m.memory_id,
       (SELECT sum(CASE WHEN w = 'C' THEN 0.5 ELSE 1.0 END) FROM unnest(t.weights) AS w),
       (SELECT sum(cardinality(a.positions)) FROM unnest(m.tsv) AS a)
FROM memories AS m, unnest(m.tsv) AS t;
ALTER TABLE memory_terms FORCE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
