-- memory 0003: the full-text index stems words with the `english` configuration (Snowball
-- stemmer, English stop words), as SQLite's index stems them with Porter (its memory
-- migration 0002), so "camping" finds "camp" and "paintings" finds "painted"; the queries
-- use the same configuration. PostgreSQL 15 cannot change a generated column's expression,
-- so `tsv` becomes a plain column that insert_memory fills (a memory's text never changes
-- after it is written), recomputed here for every existing row.

ALTER TABLE memories ALTER COLUMN tsv DROP EXPRESSION;
UPDATE memories SET tsv = to_tsvector('english', text);
ALTER TABLE memories ALTER COLUMN tsv SET NOT NULL;
