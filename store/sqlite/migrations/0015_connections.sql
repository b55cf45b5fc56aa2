-- People, their identities on each surface, the accounts they connect
-- (OAuth connections), OAuth clients registered dynamically, and connect
-- flows in progress. Token, secret and verifier columns hold values sealed
-- by internal/keyring when secrets.key_file is set (store/secrets.go lists
-- them); refresh_until is a connection's refresh lease ('' = nobody).
CREATE TABLE people (
    id         TEXT NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- One identity belongs to at most one person.
CREATE TABLE person_identities (
    surface     TEXT NOT NULL,
    external_id TEXT NOT NULL,
    person_id   TEXT NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (surface, external_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX person_identities_by_person ON person_identities (person_id);

-- person_id '' is the workspace's own connection (per: workspace).
CREATE TABLE connections (
    id              TEXT NOT NULL PRIMARY KEY,
    person_id       TEXT NOT NULL,
    provider        TEXT NOT NULL,
    account         TEXT NOT NULL,
    access_token    TEXT NOT NULL,
    refresh_token   TEXT NOT NULL,
    scope           TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    status          TEXT NOT NULL,
    problem         TEXT NOT NULL,
    service_account INTEGER NOT NULL,
    refresh_until   TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (person_id, provider)
) STRICT, WITHOUT ROWID;

-- Clients brain registered at an authorization server (dynamic
-- registration), one per issuer.
CREATE TABLE oauth_clients (
    issuer        TEXT NOT NULL PRIMARY KEY,
    client_id     TEXT NOT NULL,
    client_secret TEXT NOT NULL,
    created_at    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Connect flows in progress: single-use, expiring; verifier is the PKCE
-- code verifier.
CREATE TABLE connect_flows (
    state      TEXT NOT NULL PRIMARY KEY,
    person_id  TEXT NOT NULL,
    provider   TEXT NOT NULL,
    verifier   TEXT NOT NULL,
    detail     BLOB NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
