-- Agents' memory: the files of the memory tool's /memories tree, kept per
-- scope ("agent:NAME", "channel:...", "person:..."), their totals (which
-- the scope's limits bound; a writer locks its scope's row, so replicas
-- writing one scope take turns) and every change to them.
CREATE TABLE memory_files (
    scope      text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    content    text     NOT NULL,
    size       bigint   NOT NULL CHECK (size >= 0),
    version    bigint   NOT NULL CHECK (version >= 1),
    updated_at utc_time NOT NULL,
    updated_by text     NOT NULL DEFAULT '',
    session_id text     NOT NULL DEFAULT '',
    PRIMARY KEY (scope, path)
);

CREATE TABLE memory_scopes (
    scope text COLLATE "C" NOT NULL PRIMARY KEY,
    files bigint NOT NULL CHECK (files >= 0),
    bytes bigint NOT NULL CHECK (bytes >= 0)
);

CREATE TABLE memory_history (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope      text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    op         text     NOT NULL,
    version    bigint   NOT NULL,
    diff       text     NOT NULL DEFAULT '',
    by_who     text     NOT NULL DEFAULT '',
    session_id text     NOT NULL DEFAULT '',
    at         utc_time NOT NULL
);

CREATE INDEX memory_history_path ON memory_history (scope, path, id);
