-- People, their identities, their connections, dynamically registered
-- OAuth clients and connect flows in progress (store/sqlite's 0015).
-- Token, secret and verifier columns hold sealed values when a secrets key
-- is set; refresh_until NULL = nobody holds the refresh lease.
CREATE TABLE people (
    id         text COLLATE "C" NOT NULL PRIMARY KEY,
    name       text     NOT NULL,
    created_at utc_time NOT NULL,
    updated_at utc_time NOT NULL
);

CREATE TABLE person_identities (
    surface     text COLLATE "C" NOT NULL,
    external_id text COLLATE "C" NOT NULL,
    person_id   text COLLATE "C" NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at  utc_time NOT NULL,
    PRIMARY KEY (surface, external_id)
);
CREATE INDEX person_identities_by_person ON person_identities (person_id);

CREATE TABLE connections (
    id              text COLLATE "C" NOT NULL PRIMARY KEY,
    person_id       text COLLATE "C" NOT NULL,
    provider        text COLLATE "C" NOT NULL,
    account         text     NOT NULL,
    access_token    text     NOT NULL,
    refresh_token   text     NOT NULL,
    scope           text     NOT NULL,
    expires_at      utc_time,
    status          text     NOT NULL,
    problem         text     NOT NULL,
    service_account boolean  NOT NULL,
    refresh_until   utc_time,
    created_at      utc_time NOT NULL,
    updated_at      utc_time NOT NULL,
    UNIQUE (person_id, provider)
);

CREATE TABLE oauth_clients (
    issuer        text COLLATE "C" NOT NULL PRIMARY KEY,
    client_id     text     NOT NULL,
    client_secret text     NOT NULL,
    created_at    utc_time NOT NULL
);

CREATE TABLE connect_flows (
    state      text COLLATE "C" NOT NULL PRIMARY KEY,
    person_id  text COLLATE "C" NOT NULL,
    provider   text COLLATE "C" NOT NULL,
    verifier   text     NOT NULL,
    detail     bytea    NOT NULL,
    expires_at utc_time NOT NULL,
    created_at utc_time NOT NULL
);
