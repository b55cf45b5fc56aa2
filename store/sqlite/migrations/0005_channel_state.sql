-- Channel delivery state in typed tables, replacing the kv table of 0004.
-- kv held exactly these key shapes (written by the Slack and Linear
-- bridges); each moves to its table and kv is dropped:
--   ORIGIN:cursor:SESSION     -> delivery_cursors (value: the seq as text)
--   slack:approval:APPROVAL   -> approval_messages (value: the message ts)
--   slack:question:SESSION    -> posted_questions (value: {"ts", "question"}
--                                JSON, or '' once closed; only the JSON
--                                the bridge could read is copied)
--   slack:context:THREAD_KEY  -> thread_contexts (value: the note)
-- Times keep the fixed-width UTC text of 0001.

-- The seq of the last event of a session rendered to its platform.
CREATE TABLE delivery_cursors (
    origin     TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (origin, session_id)
) STRICT, WITHOUT ROWID;

-- The message showing an approval's card, to update it once decided.
CREATE TABLE approval_messages (
    platform    TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    message_ref TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (platform, approval_id)
) STRICT, WITHOUT ROWID;

-- The message showing a session's open question (question: engine.Question
-- as JSON), to replace its buttons once answered or closed.
CREATE TABLE posted_questions (
    platform    TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    message_ref TEXT NOT NULL,
    question    TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (platform, session_id)
) STRICT, WITHOUT ROWID;

-- The note brain left on a thread it started (a schedule's outcome).
CREATE TABLE thread_contexts (
    thread_key TEXT NOT NULL PRIMARY KEY,
    note       TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO delivery_cursors (origin, session_id, seq, updated_at)
SELECT substr(key, 1, instr(key, ':cursor:') - 1),
       substr(key, instr(key, ':cursor:') + length(':cursor:')),
       CAST(value AS INTEGER), updated_at
FROM kv WHERE key GLOB 'slack:cursor:*' OR key GLOB 'linear:cursor:*';

INSERT INTO approval_messages (platform, approval_id, message_ref, updated_at)
SELECT 'slack', substr(key, length('slack:approval:') + 1), value, updated_at
FROM kv WHERE key GLOB 'slack:approval:*';

INSERT INTO posted_questions (platform, session_id, message_ref, question, updated_at)
SELECT 'slack', substr(key, length('slack:question:') + 1),
       COALESCE(json_extract(value, '$.ts'), ''),
       COALESCE(json_extract(value, '$.question'), '{}'), updated_at
FROM kv WHERE key GLOB 'slack:question:*'
  AND CASE WHEN json_valid(value) THEN json_type(value, '$.question') END = 'object';

INSERT INTO thread_contexts (thread_key, note, updated_at)
SELECT substr(key, length('slack:context:') + 1), value, updated_at
FROM kv WHERE key GLOB 'slack:context:*';

DROP TABLE kv;
