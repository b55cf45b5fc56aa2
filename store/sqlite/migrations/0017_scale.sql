-- A turn's start reads only what it needs (issue 33).
--
-- context_seq is the session's context checkpoint: the model's context is
-- rebuilt from the events after it (the latest summary and what follows),
-- so a turn never reads the whole log. 0 = from the start.
ALTER TABLE sessions ADD COLUMN context_seq INTEGER NOT NULL DEFAULT 0;

-- The tokens the session's model calls used, kept as a running total by
-- each commit (turn.completed, and context.compacted outside a turn), so
-- usage never sums the log. Existing sessions are summed here, once.
ALTER TABLE sessions ADD COLUMN usage_input INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_output INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_cache_read INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_cache_write INTEGER NOT NULL DEFAULT 0;

UPDATE sessions SET
    usage_input = u.input, usage_output = u.output,
    usage_cache_read = u.cache_read, usage_cache_write = u.cache_write
FROM (
    SELECT session_id,
        SUM(COALESCE(json_extract(data, '$.usage.input_tokens'), 0)) AS input,
        SUM(COALESCE(json_extract(data, '$.usage.output_tokens'), 0)) AS output,
        SUM(COALESCE(json_extract(data, '$.usage.cache_read_input_tokens'), 0)) AS cache_read,
        SUM(COALESCE(json_extract(data, '$.usage.cache_creation_input_tokens'), 0)) AS cache_write
    FROM events
    WHERE json_valid(data)
        AND (type = 'turn.completed' OR (type = 'context.compacted' AND turn_id = ''))
    GROUP BY session_id
) AS u
WHERE sessions.id = u.session_id;

-- The id of the model message that proposed an approval, recorded at
-- proposal so that an apply need not search the log for it.
ALTER TABLE approvals ADD COLUMN message_id TEXT NOT NULL DEFAULT '';
