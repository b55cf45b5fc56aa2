-- Token buckets of rate_limits (store/ratelimit.go): one row per person or
-- channel that started a turn lately, holding the bucket's theoretical
-- arrival time in Unix nanoseconds. A bucket whose time has passed is
-- full, the same as no row: retention prunes those.
CREATE TABLE rate_buckets (
    key    TEXT    NOT NULL PRIMARY KEY,
    tat_ns INTEGER NOT NULL
) STRICT;
CREATE INDEX rate_buckets_tat ON rate_buckets (tat_ns);
