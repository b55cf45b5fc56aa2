package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

var _ store.RateLimits = (*Store)(nil)

// ReserveTurn draws one turn from each bucket in one transaction. The
// rows are made if missing and locked in key order (FOR UPDATE), so
// replicas reserving at once take turns and never deadlock.
func (s *Store) ReserveTurn(ctx context.Context, now time.Time, limits []store.RateLimit) (time.Time, error) {
	limits, err := store.CheckRateLimits(limits)
	if err != nil || len(limits) == 0 {
		return now, err
	}
	var runAt time.Time
	err = s.writeTx(ctx, func(tx pgx.Tx) error {
		tats := make([]time.Time, len(limits))
		for i, l := range limits {
			if _, err := tx.Exec(ctx, `INSERT INTO rate_buckets (key, tat_ns) VALUES ($1, 0) ON CONFLICT (key) DO NOTHING`, l.Key); err != nil {
				return err
			}
			var ns int64
			if err := tx.QueryRow(ctx, `SELECT tat_ns FROM rate_buckets WHERE key = $1 FOR UPDATE`, l.Key).Scan(&ns); err != nil {
				return err
			}
			if ns != 0 {
				tats[i] = time.Unix(0, ns).UTC()
			}
		}
		var next []time.Time
		runAt, next = store.PaceTurn(now, limits, tats)
		for i, l := range limits {
			if _, err := tx.Exec(ctx, `UPDATE rate_buckets SET tat_ns = $2 WHERE key = $1`, l.Key, next[i].UnixNano()); err != nil {
				return err
			}
		}
		return nil
	})
	return runAt, interpretError("reserve turn", err)
}

// PruneRateBuckets deletes up to limit buckets full again before before.
func (s *Store) PruneRateBuckets(ctx context.Context, before time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM rate_buckets WHERE key IN
		(SELECT key FROM rate_buckets WHERE tat_ns < $1 ORDER BY tat_ns LIMIT $2)`, before.UnixNano(), limit)
	if err != nil {
		return 0, interpretError("prune rate buckets", err)
	}
	return int(tag.RowsAffected()), nil
}
