-- The whole schema of store/sqlite's migrations 0001-0005, as PostgreSQL
-- starts it: sessions and their event logs, idempotency keys, results,
-- approvals, schedule runs, the inbox and channel delivery state.
--
-- Times are utc_time: UTC text in a fixed-width RFC 3339 form with nine
-- fraction digits, the same text store/sqlite writes. timestamptz keeps
-- microseconds only, and the engine (and the conformance suite) expects a
-- time to read back to the nanosecond; the fixed width makes the text sort
-- in time order, and `created_at::timestamptz` reads it as a time. Text
-- that is compared or sorted uses the "C" collation, so order is byte order
-- (as in SQLite) whatever the database's locale.
-- JSON columns are text holding the caller's bytes unchanged (jsonb would
-- reorder keys and drop whitespace; the engine relies on exact bytes).

CREATE DOMAIN utc_time AS text COLLATE "C"
    CHECK (VALUE ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$');

CREATE TABLE sessions (
    id             text COLLATE "C" NOT NULL PRIMARY KEY,
    agent          text     NOT NULL,
    origin         text     NOT NULL,
    thread_key     text COLLATE "C" NOT NULL DEFAULT '',
    interactive    boolean  NOT NULL,
    started_by     text     NOT NULL DEFAULT '',
    status         text     NOT NULL,
    created_at     utc_time NOT NULL,
    updated_at     utc_time NOT NULL,
    last_seq       bigint   NOT NULL DEFAULT 0,
    input_cursor   bigint   NOT NULL DEFAULT 0,
    checkpoint     bigint   NOT NULL DEFAULT 0,
    -- seq of the newest user.message; input is pending while it is past
    -- input_cursor. Kept by Commit so the start-up scan needs no event query.
    last_input_seq bigint   NOT NULL DEFAULT 0,
    question       text,
    result         text
);

-- One session per platform thread; sessions without a thread are unbound.
CREATE UNIQUE INDEX sessions_thread_key ON sessions (thread_key) WHERE thread_key <> '';
CREATE INDEX sessions_created ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_pending_input ON sessions (created_at DESC, id DESC)
    WHERE last_input_seq > input_cursor;

CREATE TABLE events (
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
    seq        bigint   NOT NULL,
    id         text COLLATE "C" NOT NULL UNIQUE,
    type       text     NOT NULL,
    turn_id    text     NOT NULL DEFAULT '',
    created_at utc_time NOT NULL,
    data       text     NOT NULL,
    PRIMARY KEY (session_id, seq)
);

-- scope is 'session' for CreateSession keys and 'input:<session id>' for
-- Commit input keys; ref is the session id or the first event's id.
CREATE TABLE idempotency_keys (
    scope      text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    ref        text     NOT NULL,
    created_at utc_time NOT NULL,
    PRIMARY KEY (scope, key)
);

-- Every value a session's result tool committed; id order is commit order
-- within a session (its row is locked while a commit writes).
CREATE TABLE results (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  text COLLATE "C" NOT NULL REFERENCES sessions (id),
    turn_id     text     NOT NULL DEFAULT '',
    call_id     text     NOT NULL DEFAULT '',
    reported_at utc_time NOT NULL,
    data        text     NOT NULL
);
CREATE INDEX results_session ON results (session_id, id);

-- Proposed writes waiting for, or carrying, a person's decision. decided_at
-- is NULL until a decision is recorded; output is NULL until apply produced
-- one. input and card are JSON documents.
CREATE TABLE approvals (
    id           text COLLATE "C" NOT NULL PRIMARY KEY,
    session_id   text COLLATE "C" NOT NULL REFERENCES sessions (id),
    turn_id      text     NOT NULL DEFAULT '',
    call_id      text     NOT NULL DEFAULT '',
    tool         text     NOT NULL,
    agent        text     NOT NULL DEFAULT '',
    input        text     NOT NULL,
    card         text     NOT NULL,
    requested_by text     NOT NULL DEFAULT '',
    status       text     NOT NULL,
    decision_id  text     NOT NULL DEFAULT '',
    decided_by   text     NOT NULL DEFAULT '',
    decided_at   utc_time,
    output       text,
    error        text     NOT NULL DEFAULT '',
    attempts     integer  NOT NULL DEFAULT 0,
    created_at   utc_time NOT NULL,
    expires_at   utc_time NOT NULL,
    updated_at   utc_time NOT NULL
);
CREATE INDEX approvals_created ON approvals (created_at DESC, id DESC);
-- Serves status filters and the sweep of pending approvals past expires_at.
CREATE INDEX approvals_status_expires ON approvals (status, expires_at);
CREATE INDEX approvals_session ON approvals (session_id, created_at DESC, id DESC);

-- One row per occurrence of a schedule: a fire time claimed once (the
-- primary key makes the claim atomic across processes), the session it
-- started, and how it ended. A 'skipped' row records an occurrence that
-- overlap: skip did not run.
CREATE TABLE schedule_runs (
    schedule   text COLLATE "C" NOT NULL,
    fire_time  utc_time NOT NULL,
    trigger    text     NOT NULL DEFAULT 'cron' CHECK (trigger IN ('cron', 'manual')),
    session_id text     NOT NULL DEFAULT '',
    status     text     NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted', 'skipped')),
    outcome    text     NOT NULL DEFAULT '',
    created_at utc_time NOT NULL,
    updated_at utc_time NOT NULL,
    PRIMARY KEY (schedule, fire_time)
);
-- Runs still in progress, read at start-up and by overlap checks.
CREATE INDEX schedule_runs_running ON schedule_runs (schedule, fire_time) WHERE status = 'running';

-- Inbound platform events, recorded before they are acknowledged and worked
-- later in order; payload is the platform's bytes as received.
CREATE TABLE inbox (
    id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    source     text     NOT NULL,
    thread_key text     NOT NULL,
    kind       text     NOT NULL,
    payload    bytea    NOT NULL,
    status     text     NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    error      text     NOT NULL DEFAULT '',
    attempts   integer  NOT NULL DEFAULT 0,
    created_at utc_time NOT NULL,
    done_at    utc_time
);
CREATE INDEX inbox_pending ON inbox (source, id) WHERE status = 'pending';
CREATE INDEX inbox_created ON inbox (created_at) WHERE status <> 'pending';

-- Dedupe keys of inbox items (event ids, channel+ts). inbox_id has no
-- foreign key: keys are pruned on their own clock, and a duplicate's id
-- is never inserted into inbox.
CREATE TABLE inbox_keys (
    key        text COLLATE "C" NOT NULL PRIMARY KEY,
    inbox_id   bigint   NOT NULL,
    created_at utc_time NOT NULL
);
CREATE INDEX inbox_keys_created ON inbox_keys (created_at);
CREATE INDEX inbox_keys_inbox ON inbox_keys (inbox_id);

-- The seq of the last event of a session rendered to its platform.
CREATE TABLE delivery_cursors (
    origin     text     NOT NULL,
    session_id text     NOT NULL,
    seq        bigint   NOT NULL,
    updated_at utc_time NOT NULL,
    PRIMARY KEY (origin, session_id)
);

-- The message showing an approval's card, to update it once decided.
CREATE TABLE approval_messages (
    platform    text     NOT NULL,
    approval_id text     NOT NULL,
    message_ref text     NOT NULL,
    updated_at  utc_time NOT NULL,
    PRIMARY KEY (platform, approval_id)
);

-- The message showing a session's open question (question: engine.Question
-- as JSON), to replace its buttons once answered or closed.
CREATE TABLE posted_questions (
    platform    text     NOT NULL,
    session_id  text     NOT NULL,
    message_ref text     NOT NULL,
    question    text     NOT NULL,
    updated_at  utc_time NOT NULL,
    PRIMARY KEY (platform, session_id)
);

-- The note brain left on a thread it started (a schedule's outcome).
CREATE TABLE thread_contexts (
    thread_key text     NOT NULL PRIMARY KEY,
    note       text     NOT NULL,
    updated_at utc_time NOT NULL
);
