-- Leases on work that one replica at a time may do (a session's turn, an
-- approval's apply, a session's delivery): owner and expiry, renewed by a
-- heartbeat. Under SQLite one process owns the file, so the engine keeps
-- its leases in memory; the table keeps the store interchangeable.
CREATE TABLE leases (
    key        TEXT NOT NULL PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX leases_owner ON leases (owner);

-- An inbox item's claim: which worker took it and until when ('' = none),
-- so workers of several replicas never work one item at once.
ALTER TABLE inbox ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN claimed_until TEXT NOT NULL DEFAULT '';
