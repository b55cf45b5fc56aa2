package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"time"

	"brain/engine"
	"brain/store"
)

var _ store.Retention = (*Store)(nil)

// PruneSessions deletes up to limit events of the expired sessions, oldest
// first, and the sessions left without events (store.Retention).
func (s *Store) PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error) {
	var out store.SessionsPruned
	if limit <= 0 {
		return out, nil
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		out = store.SessionsPruned{}
		for left := limit; left > 0; {
			var id string
			err := tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE updated_at < ? AND status <> ?
				ORDER BY updated_at, id LIMIT 1`, formatTime(before), string(engine.StatusRunning)).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("find expired session: %w", err)
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ? AND seq IN
				(SELECT seq FROM events WHERE session_id = ? ORDER BY seq LIMIT ?)`, id, id, left)
			if err != nil {
				return fmt.Errorf("delete events of %s: %w", id, err)
			}
			n, _ := res.RowsAffected()
			out.Events += int(n)
			left -= int(n)
			if left == 0 {
				// The batch is full; the session may have more next time.
				var more bool
				if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE session_id = ?)`, id).Scan(&more); err != nil {
					return fmt.Errorf("events left of %s: %w", id, err)
				}
				if more {
					return nil
				}
			}
			if err := deleteSession(ctx, tx, id); err != nil {
				return err
			}
			out.Sessions = append(out.Sessions, id)
		}
		return nil
	})
	return out, interpretError("prune sessions", err)
}

// deleteSession deletes a session that has no events left, with what is
// kept about it. The schedule run that started it keeps its record.
func deleteSession(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []string{
		`DELETE FROM approval_messages WHERE approval_id IN (SELECT id FROM approvals WHERE session_id = ?)`,
		`DELETE FROM approvals WHERE session_id = ?`,
		`DELETE FROM results WHERE session_id = ?`,
		`DELETE FROM search_text WHERE docid IN (SELECT docid FROM search_docs WHERE session_id = ?)`,
		`DELETE FROM search_docs WHERE session_id = ?`,
		`DELETE FROM search_people WHERE session_id = ?`,
		`DELETE FROM delivery_cursors WHERE session_id = ?`,
		`DELETE FROM posted_questions WHERE session_id = ?`,
		`DELETE FROM code_channels WHERE session_id = ?`,
		`DELETE FROM idempotency_keys WHERE scope = 'input:' || ?`,
		`DELETE FROM idempotency_keys WHERE scope = 'session' AND ref = ?`,
		`DELETE FROM sessions WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	return nil
}

// Compact runs an incremental vacuum when the file was made with
// auto_vacuum=incremental (every file brain creates is); an older file
// needs one VACUUM (docs/governance.md).
func (s *Store) Compact(ctx context.Context, pages int) (bool, error) {
	var mode int
	if err := s.write.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return false, fmt.Errorf("compact: %w", err)
	}
	if mode != 2 {
		return false, nil
	}
	q := `PRAGMA incremental_vacuum`
	if pages > 0 {
		q = fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, pages)
	}
	// The pragma frees one page per step: read the rows out.
	rows, err := s.write.QueryContext(ctx, q)
	if err != nil {
		return false, fmt.Errorf("compact: %w", err)
	}
	for rows.Next() {
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, fmt.Errorf("compact: %w", err)
	}
	return true, nil
}
