-- Governance: the audit trail, spend against budgets and the limits an
-- admin set through the API (as store/sqlite's 0016).
--
-- audit_log is hash-chained (store/audit.go): each entry's prev is the hash
-- of the entry before it. audit_head holds the newest seq and hash in its
-- one row (written by the first append); appenders lock it (FOR UPDATE),
-- so replicas append one chain.
-- detail is text, not jsonb: the hash covers its exact bytes.
CREATE TABLE audit_log (
    seq    bigint   NOT NULL PRIMARY KEY,
    at     utc_time NOT NULL,
    actor  text     NOT NULL,
    action text     NOT NULL,
    target text     NOT NULL,
    detail text     NOT NULL,
    prev   text     NOT NULL,
    hash   text     NOT NULL
);
CREATE INDEX audit_log_at ON audit_log (at);

CREATE TABLE audit_head (
    id   integer  NOT NULL PRIMARY KEY CHECK (id = 1),
    seq  bigint   NOT NULL,
    at   utc_time NOT NULL,
    hash text     NOT NULL
);

-- One row per model call: what it spent, and whom it counts against.
CREATE TABLE spend (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         utc_time  NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    person     text COLLATE "C" NOT NULL DEFAULT '',
    channel    text COLLATE "C" NOT NULL DEFAULT '',
    agent      text COLLATE "C" NOT NULL DEFAULT '',
    schedule   text COLLATE "C" NOT NULL DEFAULT '',
    tokens     bigint    NOT NULL,
    cost_micro bigint    NOT NULL  -- US dollars x 1e6
);
CREATE INDEX spend_person ON spend (person, at) WHERE person <> '';
CREATE INDEX spend_channel ON spend (channel, at) WHERE channel <> '';
CREATE INDEX spend_agent ON spend (agent, at) WHERE agent <> '';
CREATE INDEX spend_schedule ON spend (schedule, at) WHERE schedule <> '';
CREATE INDEX spend_at ON spend (at);

-- Limits an admin set, replacing the config's for one budget.
CREATE TABLE budget_limits (
    scope   text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    period  text COLLATE "C" NOT NULL,
    tokens  bigint   NOT NULL,
    cost_micro bigint NOT NULL,
    set_by  text     NOT NULL,
    reason  text     NOT NULL,
    set_at  utc_time NOT NULL,
    PRIMARY KEY (scope, subject, period)
);

-- The 80% notices sent, one per budget and period, whichever replica sent it.
CREATE TABLE budget_notices (
    key     text COLLATE "C" NOT NULL PRIMARY KEY,
    sent_at utc_time NOT NULL
);
