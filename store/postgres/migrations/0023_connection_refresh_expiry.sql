-- When a connection's refresh token expires (NULL = never said), and the
-- index the refresh worker reads connections expiring soon through
-- (store/sqlite's 0023).
ALTER TABLE connections ADD COLUMN refresh_expires_at utc_time;
CREATE INDEX connections_expiring ON connections (status, expires_at);
