-- When a connection's refresh token expires (GitHub says so with
-- refresh_token_expires_in; '' = never said), and the index the refresh
-- worker reads connections expiring soon through.
ALTER TABLE connections ADD COLUMN refresh_expires_at TEXT NOT NULL DEFAULT '';
CREATE INDEX connections_expiring ON connections (status, expires_at);
