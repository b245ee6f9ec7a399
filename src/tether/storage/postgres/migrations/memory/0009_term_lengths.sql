-- memory 0009: PostgreSQL ranks full-text candidates by bm25, as SQLite's FTS5 does.
-- A memory_terms row's weight becomes the lexeme's count in the memory (an occurrence in
-- the context, weight C, counts half, as SQLite's bm25 weighs its `context` column) in
-- place of ts_rank's sum of 1/j^2, and each row carries its memory's indexed length (every
-- lexeme occurrence of its text and context), so a search saturates the count and
-- normalises it by the memory's length against the average as bm25 does, still reading
-- only the index (the length is an included column). Existing rows are rebuilt from
-- memories.tsv; row-level security is lifted from the two tables while they are, so the
-- rebuild sees every tenant's rows whatever role runs the migration.
ALTER TABLE memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_terms NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
DELETE FROM memory_terms;
ALTER TABLE memory_terms ADD COLUMN length double precision NOT NULL;

CREATE OR REPLACE FUNCTION tether_memory_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM memory_terms
        WHERE tenant_id = OLD.tenant_id AND scope_key = OLD.scope || ':' || OLD.scope_id
          AND term = ANY (tsvector_to_array(OLD.tsv)) AND memory_id = OLD.memory_id;
        RETURN OLD;
    END IF;
    INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight, length)
    SELECT NEW.tenant_id, NEW.scope || ':' || NEW.scope_id, t.lexeme, NEW.memory_id,
           (SELECT sum(CASE WHEN w = 'C' THEN 0.5 ELSE 1.0 END) FROM unnest(t.weights) AS w),
           (SELECT sum(cardinality(a.positions)) FROM unnest(NEW.tsv) AS a)
    FROM unnest(NEW.tsv) AS t;
    RETURN NEW;
END $$;

INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight, length)
SELECT m.tenant_id, m.scope || ':' || m.scope_id, t.lexeme, m.memory_id,
       (SELECT sum(CASE WHEN w = 'C' THEN 0.5 ELSE 1.0 END) FROM unnest(t.weights) AS w),
       (SELECT sum(cardinality(a.positions)) FROM unnest(m.tsv) AS a)
FROM memories AS m, unnest(m.tsv) AS t;

ALTER TABLE memory_terms ADD PRIMARY KEY (tenant_id, scope_key, term, memory_id)
    INCLUDE (weight, length);
ALTER TABLE memory_terms FORCE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
