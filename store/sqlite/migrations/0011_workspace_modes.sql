-- What a platform workspace was found to support, learnt at run time (a
-- Slack workspace that refuses streamed replies), so a restart does not
-- ask again.
CREATE TABLE workspace_modes (
    platform   TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    mode       TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (platform, workspace)
) STRICT, WITHOUT ROWID;
