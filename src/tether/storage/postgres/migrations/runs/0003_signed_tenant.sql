-- runs 0003: row-level security reads the verified tenant, tether_tenant() (core 0002).

ALTER POLICY tenant_isolation ON run_checkpoints
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON run_journal
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON run_waits
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON run_events
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON runs
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
