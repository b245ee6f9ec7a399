-- memory 0004: a memory may have several vectors per embedder: part 0 is the whole text,
-- parts 1.. its sentences (each embedded with the whole text as context), so recall can
-- score a long memory by its best-matching sentence. Existing vectors become part 0;
-- `tether memory reembed` adds the sentence vectors of older memories.
CREATE TABLE memory_vectors_parts (
    tenant_id   TEXT NOT NULL,
    memory_id   TEXT NOT NULL,
    embedder_id TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB NOT NULL,
    part        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, memory_id, embedder_id, part)
) WITHOUT ROWID;
INSERT INTO memory_vectors_parts (tenant_id, memory_id, embedder_id, dim, vector, part)
SELECT tenant_id, memory_id, embedder_id, dim, vector, 0 FROM memory_vectors;
DROP TABLE memory_vectors;
ALTER TABLE memory_vectors_parts RENAME TO memory_vectors;
