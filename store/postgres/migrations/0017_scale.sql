-- A turn's start reads only what it needs (issue 33).
--
-- context_seq is the session's context checkpoint: the model's context is
-- rebuilt from the events after it (the latest summary and what follows),
-- so a turn never reads the whole log. 0 = from the start.
ALTER TABLE sessions ADD COLUMN context_seq bigint NOT NULL DEFAULT 0;

-- The tokens the session's model calls used, kept as a running total by
-- each commit (turn.completed, and context.compacted outside a turn), so
-- usage never sums the log. Existing sessions are summed here, once.
ALTER TABLE sessions ADD COLUMN usage_input bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_output bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_cache_read bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_cache_write bigint NOT NULL DEFAULT 0;

-- An event whose data is not JSON counts nothing, as the engine reads it.
CREATE FUNCTION pg_temp.brain_usage(data text, k text) RETURNS bigint AS $$
BEGIN
    RETURN COALESCE((data::jsonb -> 'usage' ->> k)::bigint, 0);
EXCEPTION WHEN others THEN
    RETURN 0;
END
$$ LANGUAGE plpgsql;

UPDATE sessions SET
    usage_input = u.input, usage_output = u.output,
    usage_cache_read = u.cache_read, usage_cache_write = u.cache_write
FROM (
    SELECT session_id,
        SUM(pg_temp.brain_usage(data, 'input_tokens')) AS input,
        SUM(pg_temp.brain_usage(data, 'output_tokens')) AS output,
        SUM(pg_temp.brain_usage(data, 'cache_read_input_tokens')) AS cache_read,
        SUM(pg_temp.brain_usage(data, 'cache_creation_input_tokens')) AS cache_write
    FROM events
    WHERE type = 'turn.completed' OR (type = 'context.compacted' AND turn_id = '')
    GROUP BY session_id
) AS u
WHERE sessions.id = u.session_id;

DROP FUNCTION pg_temp.brain_usage(text, text);

-- The id of the model message that proposed an approval, recorded at
-- proposal so that an apply need not search the log for it.
ALTER TABLE approvals ADD COLUMN message_id text COLLATE "C" NOT NULL DEFAULT '';
