-- Leases on work that one replica at a time may do (a session's turn, an
-- approval's apply, a session's delivery): owner and expiry, renewed by a
-- heartbeat; a replica that dies stops renewing and another takes over.
CREATE TABLE leases (
    key        text COLLATE "C" NOT NULL PRIMARY KEY,
    owner      text COLLATE "C" NOT NULL,
    expires_at utc_time NOT NULL
);
CREATE INDEX leases_owner ON leases (owner);

-- An inbox item's claim: which worker took it and until when (NULL =
-- none), so workers of several replicas never work one item at once.
ALTER TABLE inbox ADD COLUMN claimed_by text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN claimed_until utc_time;

-- Live updates across replicas: every statement that appends events
-- notifies channel brain_events once per session it wrote to (payload: the
-- session id), delivered to listeners when the transaction commits.
CREATE FUNCTION brain_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('brain_events', s.session_id) FROM (SELECT DISTINCT session_id FROM new_events) s;
    RETURN NULL;
END;
$$;
CREATE TRIGGER events_notify AFTER INSERT ON events
    REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION brain_notify_events();
