-- runs 0003: priorities, per-tenant concurrency limits and child runs. A run with a higher priority is
-- claimed first (after recovery of expired leases); a tenant with a limit row never has
-- more than max_running runs running at once.
ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
-- A child run: its parent, the parent's wait on it, and whether it runs alone among its
-- siblings (children run one at a time unless the parent's node allows them in parallel).
ALTER TABLE runs ADD COLUMN parent_run_id TEXT;
ALTER TABLE runs ADD COLUMN parent_wait_id TEXT;
ALTER TABLE runs ADD COLUMN child_serial INTEGER NOT NULL DEFAULT 0;

CREATE INDEX runs_running ON runs (status, tenant_id, workflow);
CREATE INDEX runs_children ON runs (tenant_id, parent_run_id);

CREATE TABLE run_limits (
    tenant_id   TEXT NOT NULL REFERENCES tenants (tenant_id),
    max_running INTEGER NOT NULL,
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL,
    PRIMARY KEY (tenant_id)
) WITHOUT ROWID;
