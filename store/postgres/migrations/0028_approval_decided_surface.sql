-- Where an approval's deciding vote came from (slack, api, console, ...):
-- the apply acts as the person behind DecidedBy on that surface, not on
-- the session's (an API vote on a Slack session names an API identity).
ALTER TABLE approvals ADD COLUMN decided_surface TEXT NOT NULL DEFAULT '';
