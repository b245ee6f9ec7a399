-- threads 0002: row-level security reads the verified tenant, tether_tenant() (core 0002).

ALTER POLICY tenant_isolation ON threads
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON thread_turns
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON thread_summaries
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
