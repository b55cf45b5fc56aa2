-- The Slack code channel a session moved to when it started a coding task
-- (store.CodeChannels): delivery looks it up by session, intake by channel.
-- channel is '' when the workspace refused one (state 'unavailable').
CREATE TABLE code_channels (
    session_id text COLLATE "C" NOT NULL PRIMARY KEY,
    team       text     NOT NULL,
    channel    text     NOT NULL,
    origin     text     NOT NULL,
    state      text     NOT NULL,
    context    text     NOT NULL,
    updated_at utc_time NOT NULL
);

CREATE UNIQUE INDEX code_channels_channel ON code_channels (team, channel) WHERE channel <> '';
