package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"brain/store"
)

// healthOrigin is the delivery_cursors origin of CheckWritable's probe
// row; no bridge has it.
const healthOrigin = "brain.health"

// CheckWritable commits a write (a probe row inserted and deleted in one
// transaction, so the pages still go to disk and nothing is left), so a
// full disk, a read-only file or a writer stuck on a lock shows up in
// readiness before it shows up in a turn.
func (s *Store) CheckWritable(ctx context.Context, now time.Time) error {
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT OR REPLACE INTO delivery_cursors (origin, session_id, seq, updated_at) VALUES (?, 'probe', 0, ?)`,
			healthOrigin, formatTime(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM delivery_cursors WHERE origin = ?`, healthOrigin)
		return err
	})
	if err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	return nil
}

// InboxBacklogs reports the pending inbox items per source, for metrics.
func (s *Store) InboxBacklogs(ctx context.Context) ([]store.InboxBacklog, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT source, COUNT(*), MIN(created_at) FROM inbox WHERE status = 'pending' GROUP BY source ORDER BY source`)
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
