-- memory 0005: a counter per (tenant, scope), named by its scope token (a digest: no
-- user id is kept in the clear), bumped by every write of the scope's vectors,
-- so a process's cached copy of a scope's vectors notices another process's writes.
CREATE TABLE memory_scope_versions (
    tenant_id  TEXT NOT NULL,
    scope_token  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, scope_token)
) WITHOUT ROWID;
