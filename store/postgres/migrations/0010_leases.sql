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
