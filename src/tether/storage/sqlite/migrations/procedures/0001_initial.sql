-- procedures 0001: published versions of a tenant's skills and policies (documents as
-- canonical JSON, keyed by their content hash) and the version in force.

CREATE TABLE procedure_versions (
    tenant_id    TEXT NOT NULL REFERENCES tenants (tenant_id),
    version      TEXT NOT NULL,
    documents    TEXT NOT NULL,
    source       TEXT NOT NULL,
    published_at TEXT NOT NULL,
    published_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
) WITHOUT ROWID;

CREATE TABLE procedure_current (
    tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
    version    TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id),
    FOREIGN KEY (tenant_id, version) REFERENCES procedure_versions (tenant_id, version)
) WITHOUT ROWID;
