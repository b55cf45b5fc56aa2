-- Token buckets of rate_limits (as store/sqlite's 0018): one row per
-- person or channel that started a turn lately, holding the bucket's
-- theoretical arrival time in Unix nanoseconds. Reservations lock their
-- rows (FOR UPDATE, in key order), so replicas draw from one bucket.
CREATE TABLE rate_buckets (
    key    text COLLATE "C" NOT NULL PRIMARY KEY,
    tat_ns bigint NOT NULL
);
CREATE INDEX rate_buckets_tat ON rate_buckets (tat_ns);
