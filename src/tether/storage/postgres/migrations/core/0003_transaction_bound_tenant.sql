-- core 0003: a tenant signature is good for one transaction only.
--
-- Core 0002 accepted a signature of (tenant, backend pid, nonce) for as long as the
-- backend lived, so SQL that saw one (a statement's text in pg_stat_activity) could reuse
-- it in a later transaction on that backend. Now tether_enter() checks the signature once,
-- at the start of each transaction, and only with a nonce larger than every nonce the
-- session accepted before (kept in a temporary sequence only the functions' owner may
-- change: sequences are written in place, also in read-only transactions, and never roll
-- back). It then sets tether.tenant_proof, an HMAC of the tenant, the backend and this
-- transaction's start time, which tether_tenant() checks on every statement: readable,
-- but worth nothing in another transaction or for another tenant.
-- tether_session_start() makes the sequence, once per session, outside any read-only
-- transaction; both functions refuse a same-named sequence made by anyone else. The proof
-- uses transaction_timestamp() as text: SQL that changes DateStyle or TimeZone mid
-- transaction only makes its own context fail.

CREATE FUNCTION tether_session_start() RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
BEGIN
    CREATE TEMP SEQUENCE IF NOT EXISTS tether_nonces AS bigint MINVALUE 0 START 0;
    IF (SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('pg_temp.tether_nonces'))
       IS DISTINCT FROM current_user::regrole::oid THEN
        RAISE EXCEPTION 'the session''s tether_nonces sequence is not Tether''s'
            USING ERRCODE = 'TT003';
    END IF;
END $$;

CREATE FUNCTION tether_enter(claimed text, nonce bigint, sig text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
    inner_key bytea;
    outer_key bytea;
    bound     text;
BEGIN
    IF (SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('pg_temp.tether_nonces'))
       IS DISTINCT FROM current_user::regrole::oid THEN
        RAISE EXCEPTION 'no tenant context in this session: call tether_session_start()'
            USING ERRCODE = 'TT003';
    END IF;
    SELECT s.inner_pad, s.outer_pad INTO inner_key, outer_key
    FROM tether_secrets s WHERE s.purpose = 'pg-tenant-context';
    IF encode(sha256(outer_key || sha256(inner_key || convert_to(
           claimed || chr(31) || pg_backend_pid()::text || chr(31) || nonce::text, 'UTF8'))),
           'hex') IS DISTINCT FROM sig
       OR nonce <= (SELECT s.last_value FROM pg_temp.tether_nonces s) THEN
        RETURN false;
    END IF;
    PERFORM setval('pg_temp.tether_nonces', nonce);
    bound := claimed || chr(31) || pg_backend_pid()::text || chr(31)
             || transaction_timestamp()::text;
    PERFORM set_config('tether.tenant_id', claimed, true);
    PERFORM set_config('tether.tenant_proof',
        encode(sha256(outer_key || sha256(inner_key || convert_to(bound, 'UTF8'))), 'hex'),
        true);
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION tether_tenant() RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
DECLARE
    claimed   text := current_setting('tether.tenant_id', true);
    inner_key bytea;
    outer_key bytea;
BEGIN
    SELECT s.inner_pad, s.outer_pad INTO inner_key, outer_key
    FROM tether_secrets s WHERE s.purpose = 'pg-tenant-context';
    IF encode(sha256(outer_key || sha256(inner_key || convert_to(
           claimed || chr(31) || pg_backend_pid()::text || chr(31)
           || transaction_timestamp()::text, 'UTF8'))), 'hex')
       = current_setting('tether.tenant_proof', true) THEN
        RETURN claimed;
    END IF;
    RETURN NULL;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION tether_tenant() SET search_path = pg_catalog, %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION tether_enter(text, bigint, text) '
                   'SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION tether_session_start() '
                   'SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;

REVOKE ALL ON FUNCTION tether_session_start(), tether_enter(text, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tether_session_start(), tether_enter(text, bigint, text)
    TO tether_app, tether_system;
