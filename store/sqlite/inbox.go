package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"brain/store"
)

// RecordInbound stores items in one transaction (a group commit) and
// reports, per item, whether it was a duplicate of an earlier one (or of an
// earlier item of the same batch). Nothing is stored for duplicates.
func (s *Store) RecordInbound(ctx context.Context, now time.Time, items []store.Inbound) ([]bool, error) {
	dup := make([]bool, len(items))
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for i, it := range items {
			var err error
			if dup[i], err = recordOne(ctx, tx, now, it); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record inbound: %w", err)
	}
	return dup, nil
}

// recordOne stores it unless one of its keys was recorded before. The row
// goes in first and its keys after it (INSERT OR IGNORE): a new item, by
// far the common case, costs a statement per key plus one, where looking
// every key up first cost two per key plus one, all of it while holding
// the writer that every ack waits on. A duplicate's row and the keys it
// did claim are deleted again.
func recordOne(ctx context.Context, tx *sql.Tx, now time.Time, it store.Inbound) (dup bool, err error) {
	at := formatTime(now)
	res, err := tx.ExecContext(ctx,
		`INSERT INTO inbox (source, thread_key, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
		it.Source, it.ThreadKey, it.Kind, string(it.Payload), at)
	if err != nil {
		return false, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return false, err
	}
	var claimed []string
	for _, k := range it.DedupeKeys {
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO inbox_keys (key, inbox_id, created_at) VALUES (?, ?, ?)`, k, id, at)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, err
		}
		if n == 0 && !slices.Contains(claimed, k) {
			dup = true
			break
		}
		claimed = append(claimed, k)
	}
	if !dup {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE id = ?`, id); err != nil {
		return false, err
	}
	for _, k := range claimed {
		if _, err := tx.ExecContext(ctx, `DELETE FROM inbox_keys WHERE key = ? AND inbox_id = ?`, k, id); err != nil {
			return false, err
		}
	}
	return true, nil
}

// PendingInbound returns up to limit pending items, oldest first.
func (s *Store) PendingInbound(ctx context.Context, source string, limit int) ([]store.Inbound, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT id, source, thread_key, kind, payload, attempts, created_at FROM inbox
		 WHERE status = 'pending' AND source = ? ORDER BY id LIMIT ?`, source, limit)
	if err != nil {
		return nil, fmt.Errorf("pending inbound: %w", err)
	}
	defer rows.Close()
	var out []store.Inbound
	for rows.Next() {
		var (
			it      store.Inbound
			payload string
			created string
		)
		if err := rows.Scan(&it.ID, &it.Source, &it.ThreadKey, &it.Kind, &payload, &it.Attempts, &created); err != nil {
			return nil, fmt.Errorf("pending inbound: %w", err)
		}
		it.Payload = []byte(payload)
		if it.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("pending inbound: %w", err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// FinishInbound records the outcome of worked items in one transaction.
func (s *Store) FinishInbound(ctx context.Context, now time.Time, done []store.Finished) error {
	if len(done) == 0 {
		return nil
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for _, d := range done {
			status := "done"
			if d.Err != "" {
				status = "failed"
			}
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET status = ?, error = ?, done_at = ?, attempts = attempts + 1 WHERE id = ?`,
				status, d.Err, formatTime(now), d.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish %d inbound items: %w", len(done), err)
	}
	return nil
}

// PruneInbound forgets dedupe keys and finished items older than before.
// Keys must outlive the platform's retry window (Slack: about 10 minutes).
func (s *Store) PruneInbound(ctx context.Context, before time.Time) error {
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM inbox_keys WHERE created_at < ?`, formatTime(before)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE status <> 'pending' AND created_at < ?`, formatTime(before))
		return err
	})
	if err != nil {
		return fmt.Errorf("prune inbound: %w", err)
	}
	return nil
}
