-- What a platform workspace was found to support, learnt at run time (a
-- Slack workspace that refuses streamed replies), so a restart does not
-- ask again.
CREATE TABLE workspace_modes (
    platform   text     NOT NULL,
    workspace  text     NOT NULL,
    mode       text     NOT NULL,
    updated_at utc_time NOT NULL,
    PRIMARY KEY (platform, workspace)
);
