-- memory 0005: a memory may have several vectors per embedder: part 0 is the whole text,
-- parts 1.. its sentences (each embedded with the whole text as context), so recall can
-- score a long memory by its best-matching sentence. Existing vectors become part 0;
-- `tether memory reembed` adds the sentence vectors of older memories.
ALTER TABLE memory_vectors ADD COLUMN part integer NOT NULL DEFAULT 0;
ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_pkey,
    ADD PRIMARY KEY (tenant_id, memory_id, embedder_id, part);
