package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"brain/engine"
	"brain/store"
)

// inputScope is the idempotency scope of a session's Commit.InputKey.
func inputScope(sessionID string) string { return "input:" + sessionID }

// Commit appends c.Events and updates the session in one immediate
// transaction; see engine.Commit. With a recorded InputKey nothing is
// written and the result holds the originally recorded first event, the
// current session and Duplicate=true. An error from c.Update is returned
// as is.
func (s *Store) Commit(ctx context.Context, c engine.Commit) (engine.CommitResult, error) {
	if err := store.CheckCommit(c); err != nil {
		return engine.CommitResult{}, err
	}
	var res engine.CommitResult
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = commitTx(ctx, tx, c)
		return err
	})
	if err != nil {
		return engine.CommitResult{}, interpretError("commit session "+c.SessionID, err)
	}
	return res, nil
}

func commitTx(ctx context.Context, tx *sql.Tx, c engine.Commit) (engine.CommitResult, error) {
	if err := checkFence(ctx, tx, "commit session "+c.SessionID, c.Fence); err != nil {
		return engine.CommitResult{}, err
	}
	if c.InputKey != "" {
		res, dup, err := duplicateInput(ctx, tx, c)
		if err != nil || dup {
			return res, err
		}
	}

	var lastInputSeq int64
	row := tx.QueryRowContext(ctx, `SELECT `+sessionColumns+`, last_input_seq FROM sessions WHERE id = ?`, c.SessionID)
	cur, err := scanSession(row, &lastInputSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.CommitResult{}, notFound("session", c.SessionID)
	}
	if err != nil {
		return engine.CommitResult{}, fmt.Errorf("load session: %w", err)
	}

	ap, err := store.ApplyCommit(c, cur, lastInputSeq)
	if err != nil {
		return engine.CommitResult{}, err
	}
	next, now := ap.Session, ap.Session.UpdatedAt
	if err := insertEvents(ctx, tx, ap.Events); err != nil {
		return engine.CommitResult{}, err
	}

	if a := c.NewApproval; a != nil {
		if err := insertApproval(ctx, tx, c.SessionID, now, *a); err != nil {
			return engine.CommitResult{}, err
		}
	}

	if c.InputKey != "" {
		var ref string
		if len(ap.Events) > 0 {
			ref = ap.Events[0].ID
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO idempotency_keys (scope, key, ref, created_at) VALUES (?, ?, ?, ?)`,
			inputScope(c.SessionID), c.InputKey, ref, formatTime(now)); err != nil {
			return engine.CommitResult{}, fmt.Errorf("record input key: %w", err)
		}
	}

	if r := c.Result; r != nil {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO results (session_id, turn_id, call_id, reported_at, data) VALUES (?, ?, ?, ?, ?)`,
			c.SessionID, r.TurnID, r.CallID, formatTime(r.ReportedAt), objectJSON(r.Data)); err != nil {
			return engine.CommitResult{}, fmt.Errorf("insert result: %w", err)
		}
	}

	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET status = ?, input_cursor = ?, checkpoint = ?,
			question = ?, result = ?, last_seq = ?, updated_at = ?, last_input_seq = ?, context_seq = ?,
			usage_input = ?, usage_output = ?, usage_cache_read = ?, usage_cache_write = ?
		WHERE id = ?`,
		string(next.Status), next.InputCursor, next.Checkpoint, nullJSON(next.Question), nullJSON(next.Result),
		next.LastSeq, formatTime(next.UpdatedAt), ap.LastInputSeq, next.ContextSeq,
		next.UsageTotal.InputTokens, next.UsageTotal.OutputTokens, next.UsageTotal.CacheReadTokens, next.UsageTotal.CacheWriteTokens,
		c.SessionID); err != nil {
		return engine.CommitResult{}, fmt.Errorf("update session: %w", err)
	}
	return engine.CommitResult{Session: next, Events: ap.Events}, nil
}

// duplicateInput reports whether c.InputKey was recorded before and, if so,
// the result to return: the current session and the recorded first event.
func duplicateInput(ctx context.Context, tx *sql.Tx, c engine.Commit) (engine.CommitResult, bool, error) {
	var ref string
	err := tx.QueryRowContext(ctx, `SELECT ref FROM idempotency_keys WHERE scope = ? AND key = ?`,
		inputScope(c.SessionID), c.InputKey).Scan(&ref)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.CommitResult{}, false, nil
	}
	if err != nil {
		return engine.CommitResult{}, false, fmt.Errorf("look up input key: %w", err)
	}
	cur, err := sessionByID(ctx, tx, c.SessionID)
	if err != nil {
		return engine.CommitResult{}, false, err
	}
	res := engine.CommitResult{Session: cur, Duplicate: true}
	if ref == "" {
		// The original commit had no events; there is nothing to hand back.
		return res, true, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, ref)
	if err != nil {
		return engine.CommitResult{}, false, fmt.Errorf("load event %s: %w", ref, err)
	}
	evs, err := scanEvents(rows)
	if err != nil {
		return engine.CommitResult{}, false, fmt.Errorf("load event %s: %w", ref, err)
	}
	if len(evs) == 0 {
		return engine.CommitResult{}, false, fmt.Errorf("input key %s refers to missing event %s", c.InputKey, ref)
	}
	res.Events = evs
	return res, true, nil
}

// insertEvents inserts evs, stamped by store.Log.Append, in order, and
// the audit entries they call for (store.AuditOfEvents).
func insertEvents(ctx context.Context, tx *sql.Tx, evs []engine.Event) error {
	for _, ev := range evs {
		_, err := tx.ExecContext(ctx, `INSERT INTO events (session_id, seq, id, type, turn_id, created_at, data)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ev.SessionID, ev.Seq, ev.ID, ev.Type, ev.TurnID, formatTime(ev.CreatedAt), string(ev.Data))
		if isConstraint(err) {
			return engine.Errorf(engine.CodeConflict, "event %s already exists", ev.ID)
		}
		if err != nil {
			return fmt.Errorf("insert event %s: %w", ev.ID, err)
		}
	}
	_, err := appendAuditTx(ctx, tx, store.AuditOfEvents(evs))
	return err
}
