-- core 0004: API keys of the HTTP API. Each key belongs to a tenant and a principal and
-- carries roles (at most the principal's); the secret is stored only as an HMAC under the
-- api-key-hash key derived from the master key (hash_key_id names the master that made
-- it), so a copy of the database opens no door.

CREATE TABLE api_keys (
    tenant_id    TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    roles        TEXT NOT NULL,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    hash_key_id  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT,
    revoked_by   TEXT,
    PRIMARY KEY (tenant_id, key_id),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, principal_id)
) WITHOUT ROWID;
