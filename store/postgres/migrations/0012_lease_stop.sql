-- A stop asked of a lease's holder by another replica ('' none, 'cancel',
-- 'interrupt'): a cancel or interrupt of a turn that runs elsewhere,
-- found by the holder on its heartbeat even when the NOTIFY was missed.
-- A claim of the lease clears it.
ALTER TABLE leases ADD COLUMN stop text COLLATE "C" NOT NULL DEFAULT ''
    CHECK (stop IN ('', 'cancel', 'interrupt'));
