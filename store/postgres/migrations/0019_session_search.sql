-- Search over sessions, done by the database (the console's sessions list
-- and search): the words of each session's messages, its agent and its
-- people, and who took part in it. Triggers keep both from sessions and
-- events, so every writer (commits, brain migrate's import) keeps them
-- with no code of its own; tables named search_* are derived and brain
-- migrate leaves them out (the target's triggers rebuild them).
--
-- The 'simple' configuration matches whole words, case-insensitive, with
-- no stemming, as store/sqlite's FTS4 table does.

CREATE TABLE search_text (
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
    body       tsvector NOT NULL
);
CREATE INDEX search_text_body ON search_text USING gin (body);

-- Who started a session or wrote a message in it: the "person" filter.
CREATE TABLE search_people (
    person     text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
    PRIMARY KEY (person, session_id)
);

CREATE FUNCTION search_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_text (session_id, body) VALUES (NEW.id, to_tsvector('simple', NEW.agent || ' ' || NEW.started_by));
    IF NEW.started_by <> '' THEN
        INSERT INTO search_people (person, session_id) VALUES (NEW.started_by, NEW.id) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION search_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d      json;
    author text;
BEGIN
    BEGIN
        d := NEW.data::json;
    EXCEPTION WHEN others THEN
        RETURN NEW; -- not JSON: nothing to index, and the commit goes on
    END;
    author := coalesce(d->>'author', '');
    INSERT INTO search_text (session_id, body)
        VALUES (NEW.session_id, to_tsvector('simple', author || ' ' || coalesce(d->>'text', '')));
    IF author <> '' THEN
        INSERT INTO search_people (person, session_id) VALUES (author, NEW.session_id) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER search_sessions AFTER INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION search_session();
CREATE TRIGGER search_events AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.type IN ('user.message', 'agent.message')) EXECUTE FUNCTION search_event();

-- What the triggers would have written for the sessions already stored.
INSERT INTO search_text (session_id, body) SELECT id, to_tsvector('simple', agent || ' ' || started_by) FROM sessions;
INSERT INTO search_people (person, session_id) SELECT started_by, id FROM sessions WHERE started_by <> ''
    ON CONFLICT DO NOTHING;
INSERT INTO search_text (session_id, body)
    SELECT session_id, to_tsvector('simple', coalesce(data::json->>'author', '') || ' ' || coalesce(data::json->>'text', ''))
    FROM events WHERE type IN ('user.message', 'agent.message');
INSERT INTO search_people (person, session_id)
    SELECT DISTINCT data::json->>'author', session_id FROM events
    WHERE type IN ('user.message', 'agent.message') AND coalesce(data::json->>'author', '') <> ''
    ON CONFLICT DO NOTHING;

-- The filters, each in list order (newest first).
CREATE INDEX search_sessions_status ON sessions (status, created_at DESC, id DESC);
CREATE INDEX search_sessions_origin ON sessions (origin, created_at DESC, id DESC);
CREATE INDEX search_sessions_agent ON sessions (agent, created_at DESC, id DESC);
CREATE INDEX search_text_session ON search_text (session_id);

-- The usage page sums the turns that ended in a window.
CREATE INDEX search_turns_completed ON events (created_at) WHERE type = 'turn.completed';
