package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"brain/engine"
)

var _ engine.Leases = (*Store)(nil)

// ClaimLease takes or renews the lease; the single writer serialises
// racing claims, so one of them wins.
func (s *Store) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO leases (key, owner, expires_at) VALUES (?, ?, ?)
			 ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
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

// RenewLeases moves owner's running leases to until.
func (s *Store) RenewLeases(ctx context.Context, owner string, now, until time.Time) ([]string, error) {
	var held []string
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		held = held[:0]
		rows, err := tx.QueryContext(ctx,
			`UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ? RETURNING key`,
			formatTime(until), owner, formatTime(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			held = append(held, k)
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
