package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

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
	if err := validateCommit(c); err != nil {
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
		if errors.As(err, &ee) {
			return engine.CommitResult{}, err
		}
		return engine.CommitResult{}, fmt.Errorf("commit session %s: %w", c.SessionID, err)
	}
	return res, nil
}

// validateCommit rejects, before any I/O, commits that would store
// something the engine cannot read back: an event without id or with data
// that is not JSON would break every later read of the log.
func validateCommit(c engine.Commit) error {
	if c.SessionID == "" {
		return engine.Errorf(engine.CodeInvalid, "commit: empty session id")
	}
	if c.Now.IsZero() {
		return engine.Errorf(engine.CodeInvalid, "commit session %s: Now is zero", c.SessionID)
	}
	for i, ev := range c.Events {
		if ev.ID == "" {
			return engine.Errorf(engine.CodeInvalid, "commit session %s: event %d has no id", c.SessionID, i)
		}
		if len(ev.Data) > 0 && !json.Valid(ev.Data) {
			return engine.Errorf(engine.CodeInvalid, "commit session %s: event %s: data is not valid JSON", c.SessionID, ev.ID)
		}
	}
	if c.Result != nil && len(c.Result.Data) > 0 && !json.Valid(c.Result.Data) {
		return engine.Errorf(engine.CodeInvalid, "commit session %s: result data is not valid JSON", c.SessionID)
	}
	return nil
}

func commitTx(ctx context.Context, tx *sql.Tx, c engine.Commit) (engine.CommitResult, error) {
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
	events := make([]engine.Event, len(c.Events))
	for i, ev := range c.Events {
		next.LastSeq++
		ev.SessionID = c.SessionID
		ev.Seq = next.LastSeq
		if ev.CreatedAt.IsZero() {
			ev.CreatedAt = now
		} else {
			ev.CreatedAt = ev.CreatedAt.UTC()
		}
		if len(ev.Data) == 0 {
			ev.Data = json.RawMessage("{}")
		}
		if ev.Type == engine.EventUserMessage {
			lastInputSeq = ev.Seq
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO events (session_id, seq, id, type, turn_id, created_at, data)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ev.SessionID, ev.Seq, ev.ID, ev.Type, ev.TurnID, formatTime(ev.CreatedAt), string(ev.Data))
		if isConstraint(err) {
			return engine.CommitResult{}, engine.Errorf(engine.CodeConflict, "event %s already exists", ev.ID)
		}
		if err != nil {
			return engine.CommitResult{}, fmt.Errorf("insert event %s: %w", ev.ID, err)
		}
		events[i] = ev
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
