-- Inbound platform events, recorded before they are acknowledged and worked
-- later in order; and their dedupe keys (event ids, channel+ts).
CREATE TABLE inbox (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    source     TEXT    NOT NULL,
    thread_key TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    status     TEXT    NOT NULL DEFAULT 'pending',
    error      TEXT    NOT NULL DEFAULT '',
    attempts   INTEGER NOT NULL DEFAULT 0,
    created_at TEXT    NOT NULL,
    done_at    TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX inbox_pending ON inbox (status, id);

CREATE TABLE inbox_keys (
    key        TEXT    NOT NULL PRIMARY KEY,
    inbox_id   INTEGER NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;
CREATE INDEX inbox_keys_created ON inbox_keys (created_at);

-- Small durable state of channels: delivery cursors, message refs.
CREATE TABLE kv (
    key        TEXT NOT NULL PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
