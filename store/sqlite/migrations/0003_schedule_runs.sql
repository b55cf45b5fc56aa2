-- One row per occurrence of a schedule: a fire time claimed once (the primary
-- key makes the claim atomic across processes sharing the file), the session
-- it started, and how it ended. fire_time uses the fixed-width UTC text of
-- 0001, so it sorts in time order. trigger is 'cron' or 'manual' (run now).
-- A 'skipped' row records an occurrence that overlap: skip did not run.

CREATE TABLE schedule_runs (
    schedule   TEXT NOT NULL,
    fire_time  TEXT NOT NULL,
    trigger    TEXT NOT NULL DEFAULT 'cron' CHECK (trigger IN ('cron', 'manual')),
    session_id TEXT NOT NULL DEFAULT '',
    status     TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted', 'skipped')),
    outcome    TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (schedule, fire_time)
) STRICT, WITHOUT ROWID;

-- Runs still in progress, read at start-up and by overlap checks.
CREATE INDEX schedule_runs_running ON schedule_runs (schedule, fire_time) WHERE status = 'running';
