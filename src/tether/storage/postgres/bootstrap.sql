-- Run by `tether migrate` before any migration: the two group roles and the version table.
-- Roles are cluster-wide, so creating them tolerates another database having done it.

DO $$
BEGIN
    CREATE ROLE tether_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

DO $$
BEGIN
    CREATE ROLE tether_system NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

CREATE TABLE IF NOT EXISTS tether_schema_versions (
    component  text NOT NULL,
    version    integer NOT NULL,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL,
    PRIMARY KEY (component, version)
);

GRANT SELECT ON tether_schema_versions TO tether_app, tether_system;
