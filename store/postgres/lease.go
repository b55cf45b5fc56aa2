package postgres

import (
	"context"
	"fmt"
	"time"

	"brain/engine"
)

var _ engine.Leases = (*Store)(nil)

// ClaimLease takes or renews the lease in one statement: the upsert
// updates the row only when it is owner's or expired at now, and the row
// lock it takes orders racing claims, so one of them wins.
func (s *Store) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO leases (key, owner, expires_at) VALUES ($1, $2, $3)
		 ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
		 WHERE leases.owner = EXCLUDED.owner OR leases.expires_at <= $4`,
		key, owner, formatTime(until), formatTime(now))
	if err != nil {
		return false, translate("claim lease "+key, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RenewLeases moves owner's running leases to until.
func (s *Store) RenewLeases(ctx context.Context, owner string, now, until time.Time) ([]string, error) {
	rows, err := s.pool.Query(ctx,
		`UPDATE leases SET expires_at = $3 WHERE owner = $1 AND expires_at > $2 RETURNING key`,
		owner, formatTime(now), formatTime(until))
	if err != nil {
		return nil, translate("renew leases", err)
	}
	defer rows.Close()
	var held []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
		held = append(held, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return held, nil
}

// ReleaseLease deletes owner's lease on key.
func (s *Store) ReleaseLease(ctx context.Context, key, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE key = $1 AND owner = $2`, key, owner); err != nil {
		return translate("release lease "+key, err)
	}
	return nil
}
