package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"brain/store"
)

var _ store.RateLimits = (*Store)(nil)

// ReserveTurn draws one turn from each bucket inside one write
// transaction (SQLite's single writer serialises reservations).
func (s *Store) ReserveTurn(ctx context.Context, now time.Time, limits []store.RateLimit) (time.Time, error) {
	limits, err := store.CheckRateLimits(limits)
	if err != nil || len(limits) == 0 {
		return now, err
	}
	var runAt time.Time
	err = s.writeTx(ctx, func(tx *sql.Tx) error {
		tats := make([]time.Time, len(limits))
		for i, l := range limits {
			var ns int64
			err := tx.QueryRowContext(ctx, `SELECT tat_ns FROM rate_buckets WHERE key = ?`, l.Key).Scan(&ns)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				tats[i] = time.Unix(0, ns).UTC()
			}
		}
		var next []time.Time
		runAt, next = store.PaceTurn(now, limits, tats)
		for i, l := range limits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO rate_buckets (key, tat_ns) VALUES (?, ?)
				ON CONFLICT (key) DO UPDATE SET tat_ns = excluded.tat_ns`, l.Key, next[i].UnixNano()); err != nil {
				return err
			}
		}
		return nil
	})
	return runAt, interpretError("reserve turn", err)
}

// PruneRateBuckets deletes up to limit buckets full again before before.
func (s *Store) PruneRateBuckets(ctx context.Context, before time.Time, limit int) (int, error) {
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM rate_buckets WHERE key IN
			(SELECT key FROM rate_buckets WHERE tat_ns < ? ORDER BY tat_ns LIMIT ?)`, before.UnixNano(), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), interpretError("prune rate buckets", err)
}
