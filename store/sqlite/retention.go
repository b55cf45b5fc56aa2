package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"time"

	"brain/engine"
	"brain/store"
)

var _ store.Retention = (*Store)(nil)

// yieldRows is how many events PruneSessions deletes between two looks at
// the writer's queue: a commit that arrives during a batch waits for at
// most this many deletions and the batch's commit.
const yieldRows = 50

// PruneSessions deletes up to limit events of the expired sessions, oldest
// first, and the sessions left without events (store.Retention). It ends
// the batch early, after yieldRows more events at most, once another
// writer queues for the connection (a turn committing): a turn waits for
// a short piece of a batch, never a whole one.
func (s *Store) PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error) {
	var out store.SessionsPruned
	if limit <= 0 {
		return out, nil
	}
	err := s.lightTx(ctx, func(tx *sql.Tx, queued func() bool) error {
		var err error
		out, err = pruneBatch(ctx, tx, before, limit, queued)
		return err
	})
	if err == nil {
		err = s.checkpoint(ctx)
	}
	return out, interpretError("prune sessions", err)
}

// checkpoint copies the log the job's steps wrote back into the database
// file, from a connection of the read pool (PASSIVE: it never takes the
// writer's lock, so a turn commits beside it). Without it the log grows
// by the job's deletions until a turn's commit crosses the auto-checkpoint
// threshold and pays for copying them; after a complete one the next
// writer starts the log from its beginning again. At most one per
// checkpointEvery: each syncs the database file, which cost more than a
// small batch's deletions.
func (s *Store) checkpoint(ctx context.Context) error {
	now := time.Now().UnixNano()
	last := s.checkpointed.Load()
	if now-last < int64(checkpointEvery) || !s.checkpointed.CompareAndSwap(last, now) {
		return nil
	}
	var busy, logged, copied int
	if err := s.read.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &copied); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// checkpointEvery bounds how often the retention job checkpoints: the log
// holds at most about this long of its writes.
const checkpointEvery = 100 * time.Millisecond

// pruneBatch is one PruneSessions batch in tx; it ends early once queued
// says a writer waits.
func pruneBatch(ctx context.Context, tx *sql.Tx, before time.Time, limit int, queued func() bool) (store.SessionsPruned, error) {
	var out store.SessionsPruned
	for left := limit; left > 0; {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE updated_at < ? AND status <> ?
			ORDER BY updated_at, id LIMIT 1`, formatTime(before), string(engine.StatusRunning)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("find expired session: %w", err)
		}
		for left > 0 {
			res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ? AND seq IN
				(SELECT seq FROM events WHERE session_id = ? ORDER BY seq LIMIT ?)`, id, id, min(left, yieldRows))
			if err != nil {
				return out, fmt.Errorf("delete events of %s: %w", id, err)
			}
			n, _ := res.RowsAffected()
			out.Events += int(n)
			left -= int(n)
			if n < yieldRows {
				break // the session has no events left
			}
			if queued() {
				return out, nil // the session may have more: the next batch goes on
			}
		}
		if left == 0 || queued() {
			// The batch is full or a writer waits; the session may
			// have more next time.
			var more bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE session_id = ?)`, id).Scan(&more); err != nil {
				return out, fmt.Errorf("events left of %s: %w", id, err)
			}
			if more {
				return out, nil
			}
		}
		if err := deleteSession(ctx, tx, id); err != nil {
			return out, err
		}
		out.Sessions = append(out.Sessions, id)
		if queued() {
			return out, nil
		}
	}
	return out, nil
}

// lightTx runs fn in an immediate transaction on the writer connection
// committed without waiting for the disk (synchronous=NORMAL for this one
// transaction): what the retention job deletes is deleted again by its
// next run should a power cut lose it, and the next turn's commit syncs
// the log it was written to anyway. So a turn queued behind a batch does
// not wait for a second fsync. queued says whether another writer has
// queued for the connection since lightTx was called: counted from
// before it asks for the connection itself, so a writer already waiting
// then counts too (and so does its own wait: a busy writer is contended).
func (s *Store) lightTx(ctx context.Context, fn func(tx *sql.Tx, queued func() bool) error) (err error) {
	waits := s.write.Stats().WaitCount
	queued := func() bool { return s.write.Stats().WaitCount != waits }
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var sync int
	if err := conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
		return err
	}
	defer func() {
		// The connection is the process's only writer: it must not stay
		// lax. Restored with a fresh context (ctx may be why fn ended);
		// if that fails the pool drops the connection.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA synchronous = %d`, sync)); rerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, fmt.Errorf("restore synchronous: %w", rerr))
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // the error from fn or Commit is the one to report
	if err := fn(tx, queued); err != nil {
		return err
	}
	return tx.Commit()
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
func (s *Store) Compact(ctx context.Context, pages int) (int, bool, error) {
	var mode int
	if err := s.write.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return 0, false, fmt.Errorf("compact: %w", err)
	}
	if mode != 2 {
		return 0, false, nil
	}
	var freed int
	// A step lost to a power cut is taken again: no need to wait for
	// the disk (lightTx).
	err := s.lightTx(ctx, func(tx *sql.Tx, queued func() bool) error {
		var err error
		freed, err = vacuumStep(ctx, tx, pages, queued)
		return err
	})
	if err == nil {
		err = s.checkpoint(ctx)
	}
	if err != nil {
		return 0, false, fmt.Errorf("compact: %w", err)
	}
	return freed, true, nil
}

// vacuumStep frees up to pages free pages (0: all) in tx and says how
// many went. The pragma frees one page per row it returns, and what it
// freed before its statement is closed stays freed: it stops as soon as
// queued says a writer waits.
func vacuumStep(ctx context.Context, tx *sql.Tx, pages int, queued func() bool) (int, error) {
	q := `PRAGMA incremental_vacuum`
	if pages > 0 {
		q = fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, pages)
	}
	var before, after int
	if err := tx.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&before); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	for rows.Next() && !queued() {
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&after); err != nil {
		return 0, err
	}
	return before - after, nil
}
