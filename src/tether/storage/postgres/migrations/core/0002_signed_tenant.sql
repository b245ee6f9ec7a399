-- core 0002: a tenant context SQL cannot forge, and no key material the application reads.
--
-- Row-level security used to compare each row with the setting tether.tenant_id, which any
-- role may set. The policies now read tether_tenant(): the setting only counts when
-- tether.tenant_sig is the HMAC-SHA256, under the pg-tenant-context key, of the tenant id,
-- this backend's process id and tether.tenant_nonce. The key is kept in tether_secrets,
-- which only its owner (the role that runs `tether migrate`) can read; tether_tenant() runs
-- as that owner (SECURITY DEFINER) with pg_temp last on its search path, so a temporary
-- table cannot stand in for the real one. The application computes the signature with the
-- key derived from its master key, which lives outside the database.
-- Policies call it as (SELECT tether_tenant()), so PostgreSQL evaluates it once per
-- statement rather than once per row. The subject-hash key leaves tether_meta: it is the
-- master key, kept outside the database.

CREATE TABLE tether_secrets (
    purpose   text PRIMARY KEY,
    inner_pad bytea NOT NULL,
    outer_pad bytea NOT NULL
);

REVOKE ALL ON tether_secrets FROM PUBLIC;

CREATE FUNCTION tether_tenant() RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
DECLARE
    claimed   text := current_setting('tether.tenant_id', true);
    inner_key bytea;
    outer_key bytea;
BEGIN
    SELECT s.inner_pad, s.outer_pad INTO inner_key, outer_key
    FROM tether_secrets s WHERE s.purpose = 'pg-tenant-context';
    IF encode(sha256(outer_key || sha256(inner_key || convert_to(
           claimed || chr(31) || pg_backend_pid()::text
           || chr(31) || current_setting('tether.tenant_nonce', true), 'UTF8'))), 'hex')
       = current_setting('tether.tenant_sig', true) THEN
        RETURN claimed;
    END IF;
    RETURN NULL;
END $$;

DO $$
BEGIN
    EXECUTE format(
        'ALTER FUNCTION tether_tenant() SET search_path = pg_catalog, %I, pg_temp',
        current_schema()
    );
END $$;

REVOKE ALL ON FUNCTION tether_tenant() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tether_tenant() TO tether_app, tether_system;

DELETE FROM tether_meta WHERE key = 'subject_hash_key';
REVOKE SELECT ON tether_meta FROM tether_app;

ALTER POLICY tenant_isolation ON tenants
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
ALTER POLICY tenant_isolation ON principals
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
ALTER POLICY tenant_isolation ON audit_log
    USING (tenant_id = (SELECT tether_tenant()))
    WITH CHECK (tenant_id = (SELECT tether_tenant()));
