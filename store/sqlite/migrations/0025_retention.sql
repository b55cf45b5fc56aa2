-- Retention and erasure (issue 32): deleting a session, or rewriting a
-- person's messages, must find the session's rows without scanning.
--
-- search_docs maps each search_text row (an FTS4 docid) to its session:
-- FTS4 cannot look a row up by an unindexed column, so without it every
-- deletion would read the whole index. The triggers keep it; brain
-- migrate leaves search_* tables out and the target's triggers rebuild it.
CREATE TABLE search_docs (
    session_id TEXT    NOT NULL,
    docid      INTEGER NOT NULL,
    PRIMARY KEY (session_id, docid)
) STRICT, WITHOUT ROWID;

INSERT INTO search_docs (session_id, docid) SELECT session_id, docid FROM search_text;

DROP TRIGGER search_sessions;
CREATE TRIGGER search_sessions AFTER INSERT ON sessions BEGIN
    INSERT INTO search_text (session_id, body) VALUES (NEW.id, NEW.agent || ' ' || NEW.started_by);
    INSERT INTO search_docs (session_id, docid) VALUES (NEW.id, last_insert_rowid());
    INSERT OR IGNORE INTO search_people (person, session_id)
        SELECT NEW.started_by, NEW.id WHERE NEW.started_by <> '';
END;

DROP TRIGGER search_events;
CREATE TRIGGER search_events AFTER INSERT ON events
WHEN NEW.type IN ('user.message', 'agent.message') AND json_valid(NEW.data) BEGIN
    INSERT INTO search_text (session_id, body) VALUES (NEW.session_id,
        coalesce(CAST(json_extract(NEW.data, '$.author') AS TEXT), '') || ' ' ||
        coalesce(CAST(json_extract(NEW.data, '$.text') AS TEXT), ''));
    INSERT INTO search_docs (session_id, docid) VALUES (NEW.session_id, last_insert_rowid());
    INSERT OR IGNORE INTO search_people (person, session_id)
        SELECT CAST(json_extract(NEW.data, '$.author') AS TEXT), NEW.session_id
        WHERE coalesce(CAST(json_extract(NEW.data, '$.author') AS TEXT), '') <> '';
END;

-- A session's foreign keys are checked when it is deleted: index them.
CREATE INDEX search_people_session ON search_people (session_id);
-- The retention job finds the sessions idle longest.
CREATE INDEX sessions_updated ON sessions (updated_at, id);
