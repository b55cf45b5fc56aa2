-- Deleting a session (retention) deletes its CreateSession key, found by
-- the session id in ref: without an index every deletion scanned the
-- table's keys.
CREATE INDEX idempotency_keys_ref ON idempotency_keys (ref);
