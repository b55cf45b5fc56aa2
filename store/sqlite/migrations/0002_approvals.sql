-- Proposed writes waiting for, or carrying, a person's decision.
-- Times use the same fixed-width UTC text as 0001; decided_at is '' until a
-- decision is recorded. input and card are JSON documents; output is JSON or
-- NULL when apply has not produced one.

CREATE TABLE approvals (
    id           TEXT    NOT NULL PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id),
    turn_id      TEXT    NOT NULL DEFAULT '',
    call_id      TEXT    NOT NULL DEFAULT '',
    tool         TEXT    NOT NULL,
    agent        TEXT    NOT NULL DEFAULT '',
    input        TEXT    NOT NULL,
    card         TEXT    NOT NULL,
    requested_by TEXT    NOT NULL DEFAULT '',
    status       TEXT    NOT NULL,
    decision_id  TEXT    NOT NULL DEFAULT '',
    decided_by   TEXT    NOT NULL DEFAULT '',
    decided_at   TEXT    NOT NULL DEFAULT '',
    output       TEXT,
    error        TEXT    NOT NULL DEFAULT '',
    attempts     INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    updated_at   TEXT    NOT NULL
) STRICT;

CREATE INDEX approvals_created ON approvals (created_at DESC, id DESC);
-- Serves status filters and the sweep of pending approvals past expires_at
-- (status = 'pending' AND expires_at < ?).
CREATE INDEX approvals_status_expires ON approvals (status, expires_at);
CREATE INDEX approvals_session ON approvals (session_id, created_at DESC, id DESC);
