package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/engine"
)

var _ engine.Leases = (*Store)(nil)

// ClaimLease takes or renews the lease in one statement: the upsert
// updates the row only when it is owner's or expired at now, and the row
// lock it takes orders racing claims, so one of them wins. A claim clears
// the stop request left for the work claimed before.
func (s *Store) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO leases (key, owner, expires_at) VALUES ($1, $2, $3)
		 ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, stop = ''
		 WHERE leases.owner = EXCLUDED.owner OR leases.expires_at <= $4`,
		key, owner, formatTime(until), formatTime(now))
	if err != nil {
		return false, interpretError("claim lease "+key, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RenewLeases moves owner's running leases to until and returns them with
// their stop requests, in one statement.
func (s *Store) RenewLeases(ctx context.Context, owner string, now, until time.Time) ([]engine.HeldLease, error) {
	rows, err := s.pool.Query(ctx,
		`UPDATE leases SET expires_at = $3 WHERE owner = $1 AND expires_at > $2 RETURNING key, stop`,
		owner, formatTime(now), formatTime(until))
	if err != nil {
		return nil, interpretError("renew leases", err)
	}
	defer rows.Close()
	var held []engine.HeldLease
	for rows.Next() {
		var h engine.HeldLease
		if err := rows.Scan(&h.Key, &h.Stop); err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
		held = append(held, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return held, nil
}

// ReleaseLease deletes owner's lease on key.
func (s *Store) ReleaseLease(ctx context.Context, key, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE key = $1 AND owner = $2`, key, owner); err != nil {
		return interpretError("release lease "+key, err)
	}
	return nil
}

// RequestStop records stop on the lease on key, if there is one; a cancel
// already recorded stays.
func (s *Store) RequestStop(ctx context.Context, key string, stop engine.StopRequest) error {
	if !stop.Valid() {
		return invariant("request stop on lease %s: unknown request %q", key, stop)
	}
	if _, err := s.pool.Exec(ctx,
		`UPDATE leases SET stop = CASE WHEN stop = $3 THEN stop ELSE $2 END WHERE key = $1`,
		key, string(stop), string(engine.StopCancel)); err != nil {
		return interpretError("request stop on lease "+key, err)
	}
	return nil
}

// checkFence refuses, inside a commit's transaction, a commit whose fence
// no longer holds. The lease row is read FOR SHARE: a claim that would
// take it over (an update of the row) waits until this transaction ends,
// and a claim that got there first is seen, so a takeover and the commit
// are ordered one way or the other.
func checkFence(ctx context.Context, tx pgx.Tx, op string, f *engine.Fence) error {
	if f == nil {
		return nil
	}
	var holder string
	err := tx.QueryRow(ctx, `SELECT owner FROM leases WHERE key = $1 FOR SHARE`, f.Key).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
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
