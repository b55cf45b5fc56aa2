-- Linear workspaces that installed the app with OAuth: one grant per
-- organization. refresh_until is the refresh lease (a process refreshing
-- the rotating refresh token holds it; '' = nobody). Times keep the
-- fixed-width UTC text of 0001; '' = none.
CREATE TABLE linear_tokens (
    organization_id   TEXT NOT NULL PRIMARY KEY,
    organization_name TEXT NOT NULL,
    url_key           TEXT NOT NULL,
    app_user_id       TEXT NOT NULL,
    access_token      TEXT NOT NULL,
    refresh_token     TEXT NOT NULL,
    expires_at        TEXT NOT NULL,
    scope             TEXT NOT NULL,
    status            TEXT NOT NULL,
    problem           TEXT NOT NULL,
    refresh_until     TEXT NOT NULL,
    updated_at        TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The states of install flows in progress: single-use, expiring.
CREATE TABLE oauth_states (
    state      TEXT NOT NULL PRIMARY KEY,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The workspace of each Linear agent session, to pick its token.
CREATE TABLE linear_agent_sessions (
    agent_session_id TEXT NOT NULL PRIMARY KEY,
    organization_id  TEXT NOT NULL,
    updated_at       TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Inbox items of a disconnected workspace, kept until it reconnects.
CREATE TABLE linear_parked_inbound (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id TEXT NOT NULL,
    thread_key      TEXT NOT NULL,
    kind            TEXT NOT NULL,
    payload         BLOB NOT NULL,
    created_at      TEXT NOT NULL
) STRICT;
CREATE INDEX linear_parked_inbound_by_org ON linear_parked_inbound (organization_id, id);
