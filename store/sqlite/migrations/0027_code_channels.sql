-- The Slack code channel a session moved to when it started a coding task
-- (store.CodeChannels): delivery looks it up by session, intake by channel.
-- channel is '' when the workspace refused one (state 'unavailable').
CREATE TABLE code_channels (
    session_id TEXT NOT NULL PRIMARY KEY,
    team       TEXT NOT NULL,
    channel    TEXT NOT NULL,
    origin     TEXT NOT NULL,
    state      TEXT NOT NULL,
    context    TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX code_channels_channel ON code_channels (team, channel) WHERE channel <> '';
