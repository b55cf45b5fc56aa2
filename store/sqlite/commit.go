package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"brain/engine"
)

// inputScope is the idempotency scope of a session's Commit.InputKey.
func inputScope(sessionID string) string { return "input:" + sessionID }

// updateError carries an error returned by Commit.Update through the
// transaction so Commit can return it unchanged.
type updateError struct{ err error }

func (e updateError) Error() string { return e.err.Error() }

// Commit appends c.Events and updates the session in one immediate
// transaction; see engine.Commit. With a recorded InputKey nothing is
// written and the result holds the originally recorded first event, the
// current session and Duplicate=true. An error from c.Update is returned
// as is.
func (s *Store) Commit(ctx context.Context, c engine.Commit) (engine.CommitResult, error) {
	if err := c.Validate(); err != nil {
		return engine.CommitResult{}, err
	}
	var res engine.CommitResult
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = commitTx(ctx, tx, c)
		return err
	})
	if err != nil {
		var ue updateError
		if errors.As(err, &ue) {
			return engine.CommitResult{}, ue.err
		}
		var ee *engine.Error
		if errors.As(err, &ee) || errors.Is(err, engine.ErrFenced) {
			return engine.CommitResult{}, err
		}
		return engine.CommitResult{}, fmt.Errorf("commit session %s: %w", c.SessionID, err)
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

	next := cur
	if c.Update != nil {
		upd := cur
		if err := c.Update(&upd); err != nil {
			return engine.CommitResult{}, updateError{err}
		}
		// Only the mutable fields are taken: identity, origin and the
		// sequence bookkeeping belong to the store.
		next.Status = upd.Status
		next.InputCursor = upd.InputCursor
		next.Checkpoint = upd.Checkpoint
		next.Question = upd.Question
		next.Result = upd.Result
	}

	now := c.Now.UTC()
	log := eventLog{sessionID: c.SessionID, lastSeq: next.LastSeq, lastInputSeq: lastInputSeq}
	events, err := log.append(ctx, tx, now, c.Events)
	if err != nil {
		return engine.CommitResult{}, err
	}
	next.LastSeq, lastInputSeq = log.lastSeq, log.lastInputSeq

	if a := c.NewApproval; a != nil {
		if err := insertApproval(ctx, tx, c.SessionID, now, *a); err != nil {
			return engine.CommitResult{}, err
		}
	}

	if c.InputKey != "" {
		var ref string
		if len(events) > 0 {
			ref = events[0].ID
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

	next.UpdatedAt = now
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET status = ?, input_cursor = ?, checkpoint = ?,
			question = ?, result = ?, last_seq = ?, updated_at = ?, last_input_seq = ?
		WHERE id = ?`,
		string(next.Status), next.InputCursor, next.Checkpoint, nullJSON(next.Question), nullJSON(next.Result),
		next.LastSeq, formatTime(next.UpdatedAt), lastInputSeq, c.SessionID); err != nil {
		return engine.CommitResult{}, fmt.Errorf("update session: %w", err)
	}
	// Normalize what the caller gets to what a later read returns: an empty
	// JSON value reads back as nil.
	if len(next.Question) == 0 {
		next.Question = nil
	}
	if len(next.Result) == 0 {
		next.Result = nil
	}
	return engine.CommitResult{Session: next, Events: events}, nil
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

// eventLog is a session's sequence bookkeeping inside a write transaction.
type eventLog struct {
	sessionID    string
	lastSeq      int64
	lastInputSeq int64
}

// append inserts evs after l.lastSeq in order, stamping each with its seq,
// the session id, now (when CreatedAt is zero) and {} (when Data is empty),
// and advances l. The caller writes l back to the session row.
func (l *eventLog) append(ctx context.Context, tx *sql.Tx, now time.Time, evs []engine.Event) ([]engine.Event, error) {
	out := make([]engine.Event, len(evs))
	for i, ev := range evs {
		ev.SessionID = l.sessionID
		ev.Seq = l.lastSeq + 1
		if ev.CreatedAt.IsZero() {
			ev.CreatedAt = now
		} else {
			ev.CreatedAt = ev.CreatedAt.UTC()
		}
		if len(ev.Data) == 0 {
			ev.Data = json.RawMessage("{}")
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO events (session_id, seq, id, type, turn_id, created_at, data)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ev.SessionID, ev.Seq, ev.ID, ev.Type, ev.TurnID, formatTime(ev.CreatedAt), string(ev.Data))
		if isConstraint(err) {
			return nil, engine.Errorf(engine.CodeConflict, "event %s already exists", ev.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("insert event %s: %w", ev.ID, err)
		}
		l.lastSeq = ev.Seq
		if ev.Type == engine.EventUserMessage {
			l.lastInputSeq = ev.Seq
		}
		out[i] = ev
	}
	return out, nil
}
