-- memory 0007: row-level security reads the verified tenant, tether_tenant() (core 0002).

ALTER POLICY tenant_isolation ON memories
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_subjects
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_vectors
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_decisions
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_recalls
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_consents
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_holds
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_tombstones
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_policies
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_terms
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));

ALTER POLICY tenant_isolation ON memory_scope_versions
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
