-- A stop asked of a lease's holder by another replica ('' none, 'cancel',
-- 'interrupt'): a cancel or interrupt of a turn that runs elsewhere,
-- found by the holder on its heartbeat. A claim of the lease clears it.
-- Under SQLite one process owns the file and keeps its leases in memory;
-- the column keeps the store interchangeable.
ALTER TABLE leases ADD COLUMN stop TEXT NOT NULL DEFAULT ''
    CHECK (stop IN ('', 'cancel', 'interrupt'));
