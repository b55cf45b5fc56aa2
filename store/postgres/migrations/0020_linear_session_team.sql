-- The Linear team of each agent session's issue, for the agents' memory:
-- a Linear team is the "channel" a session's memory shares (bot/memory.go).
-- Empty until a webhook names it.
ALTER TABLE linear_agent_sessions ADD COLUMN team_id TEXT NOT NULL DEFAULT '';
