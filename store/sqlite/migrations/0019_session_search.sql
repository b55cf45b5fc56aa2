-- Search over sessions, done by the database (the console's sessions list
-- and search): the words of each session's messages, its agent and its
-- people, and who took part in it. Triggers keep both from sessions and
-- events, so every writer (commits, brain migrate's import) keeps them
-- with no code of its own; tables named search_* are derived and brain
-- migrate leaves them out (the target's triggers rebuild them).
--
-- FTS4, not FTS5: mattn/go-sqlite3 compiles FTS5 only under a build tag,
-- and a plain `go build` must not make a binary whose migration fails.
-- FTS4 with unicode61 matches whole words, case-insensitive; accents are
-- kept, as PostgreSQL's simple configuration keeps them.

CREATE VIRTUAL TABLE search_text USING fts4 (session_id, body, notindexed=session_id, tokenize=unicode61 "remove_diacritics=0");

-- Who started a session or wrote a message in it: the "person" filter.
CREATE TABLE search_people (
    person     TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    PRIMARY KEY (person, session_id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER search_sessions AFTER INSERT ON sessions BEGIN
    INSERT INTO search_text (session_id, body) VALUES (NEW.id, NEW.agent || ' ' || NEW.started_by);
    INSERT OR IGNORE INTO search_people (person, session_id)
        SELECT NEW.started_by, NEW.id WHERE NEW.started_by <> '';
END;

CREATE TRIGGER search_events AFTER INSERT ON events
WHEN NEW.type IN ('user.message', 'agent.message') AND json_valid(NEW.data) BEGIN
    INSERT INTO search_text (session_id, body) VALUES (NEW.session_id,
        coalesce(CAST(json_extract(NEW.data, '$.author') AS TEXT), '') || ' ' ||
        coalesce(CAST(json_extract(NEW.data, '$.text') AS TEXT), ''));
    INSERT OR IGNORE INTO search_people (person, session_id)
        SELECT CAST(json_extract(NEW.data, '$.author') AS TEXT), NEW.session_id
        WHERE coalesce(CAST(json_extract(NEW.data, '$.author') AS TEXT), '') <> '';
END;

-- What the triggers would have written for the sessions already stored.
INSERT INTO search_text (session_id, body) SELECT id, agent || ' ' || started_by FROM sessions;
INSERT OR IGNORE INTO search_people (person, session_id) SELECT started_by, id FROM sessions WHERE started_by <> '';
INSERT INTO search_text (session_id, body)
    SELECT session_id, coalesce(CAST(json_extract(data, '$.author') AS TEXT), '') || ' ' ||
        coalesce(CAST(json_extract(data, '$.text') AS TEXT), '')
    FROM events WHERE type IN ('user.message', 'agent.message') AND json_valid(data);
INSERT OR IGNORE INTO search_people (person, session_id)
    SELECT CAST(json_extract(data, '$.author') AS TEXT), session_id FROM events
    WHERE type IN ('user.message', 'agent.message') AND json_valid(data)
        AND coalesce(CAST(json_extract(data, '$.author') AS TEXT), '') <> '';

-- The filters, each in list order (newest first).
CREATE INDEX search_sessions_status ON sessions (status, created_at DESC, id DESC);
CREATE INDEX search_sessions_origin ON sessions (origin, created_at DESC, id DESC);
CREATE INDEX search_sessions_agent ON sessions (agent, created_at DESC, id DESC);

-- The usage page sums the turns that ended in a window.
CREATE INDEX search_turns_completed ON events (created_at) WHERE type = 'turn.completed';
