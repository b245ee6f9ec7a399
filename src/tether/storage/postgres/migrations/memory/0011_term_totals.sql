-- memory 0011: bm25 on PostgreSQL counts its memories and their average length over the
-- tenant, as SQLite's FTS5 counts them over its whole index. FTS5 takes a term's
-- document frequency in the scope (each scope has terms of its own) but the number of
-- rows and the average length of the whole table; until now PostgreSQL stood in the
-- total of the query's posting lists for the one and their mean length for the other,
-- and put ln(1 + ...) where FTS5 takes ln(...) clamped to 1e-6: a word of most of a
-- scope's memories weighed far more against a rare one than on SQLite.
-- Counting the tenant per query would read every one of its memories, so a few rows per
-- tenant keep the count and the summed length (every lexeme occurrence, as
-- memory_terms.length counts them); a search adds up the tenant's rows. A constraint
-- trigger deferred to commit keeps them, each connection on the shard its server
-- process id picks (one of 16), so concurrent writers of one tenant wait for each other
-- only when they share a shard, and then only while they commit; one transaction only
-- ever touches one shard, so two cannot deadlock on them. A shard's figures may go below
-- zero (a memory written on one and erased on another); their sum is the tenant's. The
-- rows are rebuilt from memories with row-level security lifted, as in memory 0009.
CREATE TABLE memory_term_totals (
    tenant_id  text NOT NULL,
    shard      smallint NOT NULL,
    memories   bigint NOT NULL,
    length     double precision NOT NULL,
    PRIMARY KEY (tenant_id, shard)
);

CREATE FUNCTION tether_memory_term_totals() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed memories := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    sign integer := CASE WHEN TG_OP = 'DELETE' THEN -1 ELSE 1 END;
BEGIN
    INSERT INTO memory_term_totals AS totals (tenant_id, shard, memories, length)
    SELECT changed.tenant_id, pg_backend_pid() % 16, sign,
           sign * coalesce(sum(cardinality(a.positions)), 0)
    FROM unnest(changed.tsv) AS a
    ON CONFLICT (tenant_id, shard) DO UPDATE
        SET memories = totals.memories + excluded.memories,
            length = totals.length + excluded.length;
    RETURN changed;
END $$;

CREATE CONSTRAINT TRIGGER memories_term_totals AFTER INSERT OR DELETE ON memories
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION tether_memory_term_totals();

GRANT SELECT, INSERT, UPDATE, DELETE ON memory_term_totals TO tether_app, tether_system;

ALTER TABLE memory_term_totals ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_term_totals TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON memory_term_totals TO tether_system USING (true) WITH CHECK (true);
CREATE POLICY global_read ON memory_term_totals FOR SELECT TO tether_app
    USING (tenant_id = '_global');

ALTER TABLE memories NO FORCE ROW LEVEL SECURITY;
INSERT INTO memory_term_totals (tenant_id, shard, memories, length)
SELECT m.tenant_id, 0, count(*),
       coalesce(sum((SELECT sum(cardinality(a.positions)) FROM unnest(m.tsv) AS a)), 0)
FROM memories AS m
GROUP BY m.tenant_id;
ALTER TABLE memory_term_totals FORCE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
