-- The name of the API key that started a session ('' for none): a key
-- with act_for may start a session for someone else, and forbid_self
-- keeps that key from approving the session's requests itself.
ALTER TABLE sessions ADD COLUMN started_key TEXT NOT NULL DEFAULT '';
