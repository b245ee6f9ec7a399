-- runs 0003: priorities and per-tenant concurrency limits. A run with a higher priority is
-- claimed first (after recovery of expired leases); a tenant with a limit row never has
-- more than max_running runs running at once.
ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;

CREATE INDEX runs_running ON runs (status, tenant_id, workflow);

CREATE TABLE run_limits (
    tenant_id   TEXT NOT NULL REFERENCES tenants (tenant_id),
    max_running INTEGER NOT NULL,
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL,
    PRIMARY KEY (tenant_id)
) WITHOUT ROWID;
