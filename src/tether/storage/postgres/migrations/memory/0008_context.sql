-- memory 0008: a memory is indexed with the context it came from (index text never
-- returned as its text: e.g. the neighbouring turns of its conversation), remembers the
-- session or thread it came from (`episode`: recall weighs the memories of one together)
-- and when it was last contradicted (recall leaves out a contradicted memory whose
-- confidence fell below the tenant's threshold). The context's lexemes enter `tsv` at
-- weight C (the memory's own words keep the default, D) and count half in memory_terms
-- and in ts_rank, as SQLite's bm25 weighs its `context` column (memory 0006 there).
ALTER TABLE memories ADD COLUMN index_context text;
ALTER TABLE memories ADD COLUMN episode text;
ALTER TABLE memories ADD COLUMN contradicted_at timestamptz;

CREATE OR REPLACE FUNCTION tether_memory_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM memory_terms
        WHERE tenant_id = OLD.tenant_id AND scope_key = OLD.scope || ':' || OLD.scope_id
          AND term = ANY (tsvector_to_array(OLD.tsv)) AND memory_id = OLD.memory_id;
        RETURN OLD;
    END IF;
    INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight)
    SELECT NEW.tenant_id, NEW.scope || ':' || NEW.scope_id, t.lexeme, NEW.memory_id,
           (SELECT sum(CASE WHEN w.weight = 'C' THEN 0.5 ELSE 1.0 END / (w.j * w.j))
            FROM unnest(t.weights) WITH ORDINALITY AS w (weight, j))
    FROM unnest(NEW.tsv) AS t;
    RETURN NEW;
END $$;
