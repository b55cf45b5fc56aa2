-- Governance: the audit trail, spend against budgets and the limits an
-- admin set through the API.
--
-- audit_log is hash-chained (store/audit.go): each entry's prev is the hash
-- of the entry before it. audit_head holds the newest seq and hash in its
-- one row (written by the first append), so the chain goes on after
-- retention pruned every entry.
CREATE TABLE audit_log (
    seq    INTEGER NOT NULL PRIMARY KEY,
    at     TEXT    NOT NULL,
    actor  TEXT    NOT NULL,
    action TEXT    NOT NULL,
    target TEXT    NOT NULL,
    detail TEXT    NOT NULL,
    prev   TEXT    NOT NULL,
    hash   TEXT    NOT NULL
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at);

CREATE TABLE audit_head (
    id   INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL,
    at   TEXT    NOT NULL,
    hash TEXT    NOT NULL
) STRICT;

-- One row per model call: what it spent, and whom it counts against.
CREATE TABLE spend (
    id         INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    at         TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    person     TEXT    NOT NULL DEFAULT '',
    channel    TEXT    NOT NULL DEFAULT '',
    agent      TEXT    NOT NULL DEFAULT '',
    schedule   TEXT    NOT NULL DEFAULT '',
    tokens     INTEGER NOT NULL,
    cost_micro INTEGER NOT NULL  -- US dollars x 1e6
) STRICT;
CREATE INDEX spend_person ON spend (person, at) WHERE person <> '';
CREATE INDEX spend_channel ON spend (channel, at) WHERE channel <> '';
CREATE INDEX spend_agent ON spend (agent, at) WHERE agent <> '';
CREATE INDEX spend_schedule ON spend (schedule, at) WHERE schedule <> '';
CREATE INDEX spend_at ON spend (at);

-- Limits an admin set, replacing the config's for one budget.
CREATE TABLE budget_limits (
    scope   TEXT    NOT NULL,
    subject TEXT    NOT NULL,
    period  TEXT    NOT NULL,
    tokens  INTEGER NOT NULL,
    cost_micro INTEGER NOT NULL,
    set_by  TEXT    NOT NULL,
    reason  TEXT    NOT NULL,
    set_at  TEXT    NOT NULL,
    PRIMARY KEY (scope, subject, period)
) STRICT;

-- The 80% notices sent, one per budget and period, whichever replica sent it.
CREATE TABLE budget_notices (
    key     TEXT NOT NULL PRIMARY KEY,
    sent_at TEXT NOT NULL
) STRICT;
