-- Agents' memory: the files of the memory tool's /memories tree, kept per
-- scope ("agent:NAME", "channel:...", "person:..."), their totals (which
-- the scope's limits bound, and whose row serialises a scope's writers on
-- PostgreSQL) and every change to them.
CREATE TABLE memory_files (
    scope      TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    size       INTEGER NOT NULL CHECK (size >= 0),
    version    INTEGER NOT NULL CHECK (version >= 1),
    updated_at TEXT    NOT NULL,
    updated_by TEXT    NOT NULL DEFAULT '',
    session_id TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (scope, path)
) STRICT, WITHOUT ROWID;

CREATE TABLE memory_scopes (
    scope TEXT    NOT NULL PRIMARY KEY,
    files INTEGER NOT NULL CHECK (files >= 0),
    bytes INTEGER NOT NULL CHECK (bytes >= 0)
) STRICT, WITHOUT ROWID;

CREATE TABLE memory_history (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    scope      TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    op         TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    diff       TEXT    NOT NULL DEFAULT '',
    by_who     TEXT    NOT NULL DEFAULT '',
    session_id TEXT    NOT NULL DEFAULT '',
    at         TEXT    NOT NULL
) STRICT;

CREATE INDEX memory_history_path ON memory_history (scope, path, id);
