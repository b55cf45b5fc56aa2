-- Retention and erasure (issue 32): deleting a session checks the rows
-- that reference it (search_text is indexed by session since 0019).
CREATE INDEX search_people_session ON search_people (session_id);
-- The retention job finds the sessions idle longest.
CREATE INDEX sessions_updated ON sessions (updated_at, id);
