-- Sessions, their append-only event logs, idempotency keys and result history.
-- Times are UTC text in a fixed-width RFC 3339 form with nanoseconds, so they
-- sort as text and round-trip exactly. JSON columns hold the caller's bytes.

CREATE TABLE sessions (
    id             TEXT    NOT NULL PRIMARY KEY,
    agent          TEXT    NOT NULL,
    origin         TEXT    NOT NULL,
    thread_key     TEXT    NOT NULL DEFAULT '',
    interactive    INTEGER NOT NULL,
    started_by     TEXT    NOT NULL DEFAULT '',
    status         TEXT    NOT NULL,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    last_seq       INTEGER NOT NULL DEFAULT 0,
    input_cursor   INTEGER NOT NULL DEFAULT 0,
    checkpoint     INTEGER NOT NULL DEFAULT 0,
    -- seq of the newest user.message; input is pending while it is past
    -- input_cursor. Kept by Commit so the start-up scan needs no event query.
    last_input_seq INTEGER NOT NULL DEFAULT 0,
    question       TEXT,
    result         TEXT
) STRICT;

-- One session per platform thread; sessions without a thread are unbound.
CREATE UNIQUE INDEX sessions_thread_key ON sessions (thread_key) WHERE thread_key <> '';
CREATE INDEX sessions_created ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_pending_input ON sessions (created_at DESC, id DESC)
    WHERE last_input_seq > input_cursor;

CREATE TABLE events (
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL,
    id         TEXT    NOT NULL UNIQUE,
    type       TEXT    NOT NULL,
    turn_id    TEXT    NOT NULL DEFAULT '',
    created_at TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

-- scope is "session" for CreateSession keys and "input:<session id>" for
-- Commit input keys; ref is the session id or the first event's id.
CREATE TABLE idempotency_keys (
    scope      TEXT NOT NULL,
    key        TEXT NOT NULL,
    ref        TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;

-- Every value a session's result tool committed; rowid order is commit order.
CREATE TABLE results (
    id          INTEGER NOT NULL PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    turn_id     TEXT    NOT NULL DEFAULT '',
    call_id     TEXT    NOT NULL DEFAULT '',
    reported_at TEXT    NOT NULL,
    data        TEXT    NOT NULL
) STRICT;

CREATE INDEX results_session ON results (session_id, id);
