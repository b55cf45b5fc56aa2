package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

var _ store.Health = (*Store)(nil)

// healthOrigin is the delivery_cursors origin of CheckWritable's probe
// row; no bridge has it.
const healthOrigin = "brain.health"

// CheckWritable commits a write (a probe row inserted and deleted in one
// transaction, so it reaches the WAL and leaves nothing), so a database
// that is down, read-only (a standby) or out of space shows up in readiness
// before it shows up in a turn.
func (s *Store) CheckWritable(ctx context.Context, now time.Time) error {
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx,
			`INSERT INTO delivery_cursors (origin, session_id, seq, updated_at) VALUES ($1, 'probe', 0, $2)
			 ON CONFLICT (origin, session_id) DO UPDATE SET updated_at = EXCLUDED.updated_at`,
			healthOrigin, formatTime(now)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM delivery_cursors WHERE origin = $1`, healthOrigin)
		return err
	})
	if err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	return nil
}

// InboxBacklogs reports the pending inbox items per source, for metrics.
func (s *Store) InboxBacklogs(ctx context.Context) ([]store.InboxBacklog, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT source, COUNT(*), MIN(created_at) FROM inbox WHERE status = 'pending' GROUP BY source ORDER BY source COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("inbox backlog: %w", err)
	}
	defer rows.Close()
	var out []store.InboxBacklog
	for rows.Next() {
		var b store.InboxBacklog
		var oldest string
		if err := rows.Scan(&b.Source, &b.Depth, &oldest); err != nil {
			return nil, fmt.Errorf("inbox backlog: %w", err)
		}
		if b.Oldest, err = parseTime(oldest); err != nil {
			return nil, fmt.Errorf("inbox backlog: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
