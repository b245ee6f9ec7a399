-- working_memory 0002: row-level security reads the verified tenant, tether_tenant() (core 0002).

ALTER POLICY tenant_isolation ON working_memory
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
