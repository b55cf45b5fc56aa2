package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"brain/engine"
)

var _ engine.Leases = (*Store)(nil)

// ClaimLease takes or renews the lease; the single writer serialises
// racing claims, so one of them wins. A claim clears the stop request
// left for the work claimed before.
func (s *Store) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO leases (key, owner, expires_at) VALUES (?, ?, ?)
			 ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, stop = ''
			 WHERE leases.owner = excluded.owner OR leases.expires_at <= ?`,
			key, owner, formatTime(until), formatTime(now))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim lease %s: %w", key, err)
	}
	return n == 1, nil
}

// RenewLeases moves owner's running leases to until and returns them with
// their stop requests.
func (s *Store) RenewLeases(ctx context.Context, owner string, now, until time.Time) ([]engine.HeldLease, error) {
	var held []engine.HeldLease
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		held = held[:0]
		rows, err := tx.QueryContext(ctx,
			`UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ? RETURNING key, stop`,
			formatTime(until), owner, formatTime(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h engine.HeldLease
			if err := rows.Scan(&h.Key, &h.Stop); err != nil {
				return err
			}
			held = append(held, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return held, nil
}

// ReleaseLease deletes owner's lease on key.
func (s *Store) ReleaseLease(ctx context.Context, key, owner string) error {
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE key = ? AND owner = ?`, key, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("release lease %s: %w", key, err)
	}
	return nil
}

// RequestStop records stop on the lease on key, if there is one; a cancel
// already recorded stays.
func (s *Store) RequestStop(ctx context.Context, key string, stop engine.StopRequest) error {
	if !stop.Valid() {
		return invariant("request stop on lease %s: unknown request %q", key, stop)
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`UPDATE leases SET stop = CASE WHEN stop = ? THEN stop ELSE ? END WHERE key = ?`,
			string(engine.StopCancel), string(stop), key)
		return err
	})
	if err != nil {
		return fmt.Errorf("request stop on lease %s: %w", key, err)
	}
	return nil
}

// checkFence refuses, inside a commit's transaction, a commit whose fence
// no longer holds; the single writer orders it against every claim.
func checkFence(ctx context.Context, tx *sql.Tx, op string, f *engine.Fence) error {
	if f == nil {
		return nil
	}
	var holder string
	err := tx.QueryRowContext(ctx, `SELECT owner FROM leases WHERE key = ?`, f.Key).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) {
		return f.Refused(op, "")
	}
	if err != nil {
		return fmt.Errorf("%s: read lease %s: %w", op, f.Key, err)
	}
	if holder != f.Owner {
		return f.Refused(op, holder)
	}
	return nil
}
