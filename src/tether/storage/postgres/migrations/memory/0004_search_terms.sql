-- memory 0004: a btree of every memory's lexemes by tenant and scope, for full-text search.
--
-- Row-level security lets the planner use only leakproof operators in index conditions,
-- and tsvector @@ tsquery is not leakproof: for tether_app the GIN index on memories.tsv
-- was never used, and every search read and matched every row of the tenant (about 100
-- ms per query at 100,000 memories). memory_terms holds one row per distinct lexeme of
-- each memory under its 'scope:scope_id', with the lexeme's share of ts_rank: with no
-- weights set, ts_rank of an OR query is, up to a constant factor, the sum over the
-- matched lexemes of sum(1/j^2) for j = 1 .. its occurrences. A search looks the
-- query's lexemes up with text equality (leakproof, so the index is used), keeps the
-- memories of the highest summed weight, and matches and ranks only those with ts_rank.
-- A trigger on memories keeps the table in step: a memory's text and scope never change
-- after it is written, and its terms go when it is deleted.

CREATE TABLE memory_terms (
    tenant_id  text NOT NULL,
    scope_key  text NOT NULL,
    term       text NOT NULL,
    memory_id  text NOT NULL,
    weight     double precision NOT NULL,
    PRIMARY KEY (tenant_id, scope_key, term, memory_id) INCLUDE (weight)
);

CREATE FUNCTION tether_memory_terms() RETURNS trigger
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
           (SELECT sum(1.0 / (j * j)) FROM generate_series(1, cardinality(t.positions)) AS j)
    FROM unnest(NEW.tsv) AS t;
    RETURN NEW;
END $$;

CREATE TRIGGER memories_terms AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION tether_memory_terms();

INSERT INTO memory_terms (tenant_id, scope_key, term, memory_id, weight)
SELECT m.tenant_id, m.scope || ':' || m.scope_id, t.lexeme, m.memory_id,
       (SELECT sum(1.0 / (j * j)) FROM generate_series(1, cardinality(t.positions)) AS j)
FROM memories AS m, unnest(m.tsv) AS t;

GRANT SELECT, INSERT, UPDATE, DELETE ON memory_terms TO tether_app, tether_system;

ALTER TABLE memory_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_terms TO tether_app
    USING (tenant_id = current_setting('tether.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('tether.tenant_id', true));
CREATE POLICY system_access ON memory_terms TO tether_system USING (true) WITH CHECK (true);
CREATE POLICY global_read ON memory_terms FOR SELECT TO tether_app
    USING (tenant_id = '_global');
