-- runs 0004: priorities, per-tenant concurrency limits, child runs and wake-ups. A run with a higher
-- priority is claimed first (after recovery of expired leases); a tenant with a limit row
-- never has more than max_running runs running at once. Whenever a run becomes claimable
-- (queued, or scheduled for a time) or leaves 'running' (freeing a slot under a limit),
-- idle workers listening on channel tether_runs are woken at commit.
ALTER TABLE runs ADD COLUMN priority integer NOT NULL DEFAULT 0;
-- A child run: its parent, the parent's wait on it, and whether it runs alone among its
-- siblings (children run one at a time unless the parent's node allows them in parallel).
ALTER TABLE runs ADD COLUMN parent_run_id text;
ALTER TABLE runs ADD COLUMN parent_wait_id text;
ALTER TABLE runs ADD COLUMN child_serial boolean NOT NULL DEFAULT false;

CREATE INDEX runs_running ON runs (status, tenant_id, workflow);
CREATE INDEX runs_children ON runs (tenant_id, parent_run_id);

CREATE TABLE run_limits (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    max_running integer NOT NULL,
    updated_at  timestamptz NOT NULL,
    updated_by  text NOT NULL,
    PRIMARY KEY (tenant_id)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON run_limits TO tether_app, tether_system;

ALTER TABLE run_limits ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_limits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_limits TO tether_app
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
CREATE POLICY system_access ON run_limits TO tether_system USING (true) WITH CHECK (true);

CREATE FUNCTION tether_runs_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tether_runs', '');
    RETURN NULL;
END $$;

CREATE TRIGGER runs_wake_on_insert AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.status IN ('queued', 'scheduled'))
    EXECUTE FUNCTION tether_runs_notify();

CREATE TRIGGER runs_wake_on_update AFTER UPDATE OF status, resume_at ON runs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       AND (NEW.status IN ('queued', 'scheduled') OR OLD.status = 'running'))
    EXECUTE FUNCTION tether_runs_notify();
