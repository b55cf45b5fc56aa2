-- Linear workspaces that installed the app with OAuth (store/sqlite's
-- 0006): one grant per organization. refresh_until is the refresh lease
-- (NULL = nobody holds it); expires_at NULL = no expiry known.
CREATE TABLE linear_tokens (
    organization_id   text COLLATE "C" NOT NULL PRIMARY KEY,
    organization_name text     NOT NULL,
    url_key           text     NOT NULL,
    app_user_id       text     NOT NULL,
    access_token      text     NOT NULL,
    refresh_token     text     NOT NULL,
    expires_at        utc_time,
    scope             text     NOT NULL,
    status            text     NOT NULL,
    problem           text     NOT NULL,
    refresh_until     utc_time,
    updated_at        utc_time NOT NULL
);

-- The states of install flows in progress: single-use, expiring.
CREATE TABLE oauth_states (
    state      text COLLATE "C" NOT NULL PRIMARY KEY,
    expires_at utc_time NOT NULL,
    created_at utc_time NOT NULL
);

-- The workspace of each Linear agent session, to pick its token.
CREATE TABLE linear_agent_sessions (
    agent_session_id text COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id  text     NOT NULL,
    updated_at       utc_time NOT NULL
);

-- Inbox items of a disconnected workspace, kept until it reconnects.
CREATE TABLE linear_parked_inbound (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    organization_id text COLLATE "C" NOT NULL,
    thread_key      text     NOT NULL,
    kind            text     NOT NULL,
    payload         bytea    NOT NULL,
    created_at      utc_time NOT NULL
);
CREATE INDEX linear_parked_inbound_by_org ON linear_parked_inbound (organization_id, id);
