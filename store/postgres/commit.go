package postgres

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"brain/engine"
	"brain/store"
)

// inputScope is the idempotency scope of a session's Commit.InputKey.
func inputScope(sessionID string) string { return "input:" + sessionID }

// Commit appends c.Events and updates the session in one transaction; see
// engine.Commit. The session row is locked first (SELECT ... FOR UPDATE),
// so commits to one session from any process run one after another: each
// sees the one before it, its seqs follow on, and of two commits with the
// same InputKey the second finds the key recorded. With a recorded InputKey
// nothing is written and the result holds the originally recorded first
// event, the current session and Duplicate=true. An error from c.Update is
// returned as is.
func (s *Store) Commit(ctx context.Context, c engine.Commit) (engine.CommitResult, error) {
	if err := store.CheckCommit(c); err != nil {
		return engine.CommitResult{}, err
	}
	if err := commitText(c); err != nil {
		return engine.CommitResult{}, err
	}
	var res engine.CommitResult
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		var err error
		res, err = commitTx(ctx, tx, c)
		return err
	})
	if err != nil {
		return engine.CommitResult{}, interpretError("commit session "+c.SessionID, err)
	}
	return res, nil
}

// commitText refuses, before any I/O, what c.Validate accepts but a
// PostgreSQL text column cannot keep: json.Valid does not check UTF-8
// inside strings, text does.
func commitText(c engine.Commit) error {
	op := "commit session " + c.SessionID
	if err := eventsText(op, c.Events); err != nil {
		return err
	}
	if c.Result != nil {
		if err := validText(op+": result data", c.Result.Data); err != nil {
			return err
		}
	}
	if a := c.NewApproval; a != nil {
		if err := validText(op+": approval "+a.ID+": input", a.Input); err != nil {
			return err
		}
		return validText(op+": approval "+a.ID+": output", a.Output)
	}
	return nil
}

// eventsText is commitText for appended events; op prefixes the message.
func eventsText(op string, evs []engine.Event) error {
	for _, ev := range evs {
		if err := validText(op+": event "+ev.ID+": data", ev.Data); err != nil {
			return err
		}
	}
	return nil
}

// validText accepts b if PostgreSQL can keep it as text; what names it in
// the message.
func validText(what string, b []byte) error {
	if !utf8.Valid(b) {
		return invariant("%s is not valid UTF-8", what)
	}
	return nil
}

func commitTx(ctx context.Context, tx pgx.Tx, c engine.Commit) (engine.CommitResult, error) {
	// The lease first, then the session: no transaction locks them the
	// other way round.
	if err := checkFence(ctx, tx, "commit session "+c.SessionID, c.Fence); err != nil {
		return engine.CommitResult{}, err
	}
	var lastInputSeq int64
	row := tx.QueryRow(ctx, `SELECT `+sessionColumns+`, last_input_seq FROM sessions WHERE id = $1 FOR UPDATE`, c.SessionID)
	cur, err := scanSession(row, &lastInputSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.CommitResult{}, notFound("session", c.SessionID)
	}
	if err != nil {
		return engine.CommitResult{}, fmt.Errorf("load session: %w", err)
	}

	if c.InputKey != "" {
		res, dup, err := duplicateInput(ctx, tx, c, cur)
		if err != nil || dup {
			return res, err
		}
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
		if _, err := tx.Exec(ctx,
			`INSERT INTO idempotency_keys (scope, key, ref, created_at) VALUES ($1, $2, $3, $4)`,
			inputScope(c.SessionID), c.InputKey, ref, formatTime(now)); err != nil {
			return engine.CommitResult{}, fmt.Errorf("record input key: %w", err)
		}
	}

	if r := c.Result; r != nil {
		if _, err := tx.Exec(ctx,
			`INSERT INTO results (session_id, turn_id, call_id, reported_at, data) VALUES ($1, $2, $3, $4, $5)`,
			c.SessionID, r.TurnID, r.CallID, formatTime(r.ReportedAt), objectJSON(r.Data)); err != nil {
			return engine.CommitResult{}, fmt.Errorf("insert result: %w", err)
		}
	}

	if _, err := tx.Exec(ctx, `UPDATE sessions SET status = $1, input_cursor = $2, checkpoint = $3,
			question = $4, result = $5, last_seq = $6, updated_at = $7, last_input_seq = $8, context_seq = $9,
			usage_input = $10, usage_output = $11, usage_cache_read = $12, usage_cache_write = $13
		WHERE id = $14`,
		string(next.Status), next.InputCursor, next.Checkpoint, nullJSON(next.Question), nullJSON(next.Result),
		next.LastSeq, formatTime(next.UpdatedAt), ap.LastInputSeq, next.ContextSeq,
		next.UsageTotal.InputTokens, next.UsageTotal.OutputTokens, next.UsageTotal.CacheReadTokens, next.UsageTotal.CacheWriteTokens,
		c.SessionID); err != nil {
		return engine.CommitResult{}, fmt.Errorf("update session: %w", err)
	}
	return engine.CommitResult{Session: next, Events: ap.Events}, nil
}

// duplicateInput reports whether c.InputKey was recorded before and, if so,
// the result to return: the current session cur (locked by the caller) and
// the recorded first event.
func duplicateInput(ctx context.Context, tx pgx.Tx, c engine.Commit, cur engine.Session) (engine.CommitResult, bool, error) {
	var ref string
	err := tx.QueryRow(ctx, `SELECT ref FROM idempotency_keys WHERE scope = $1 AND key = $2`,
		inputScope(c.SessionID), c.InputKey).Scan(&ref)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.CommitResult{}, false, nil
	}
	if err != nil {
		return engine.CommitResult{}, false, fmt.Errorf("look up input key: %w", err)
	}
	res := engine.CommitResult{Session: cur, Duplicate: true}
	if ref == "" {
		// The original commit had no events; there is nothing to hand back.
		return res, true, nil
	}
	evs, err := queryEvents(ctx, tx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, ref)
	if err != nil {
		return engine.CommitResult{}, false, fmt.Errorf("load event %s: %w", ref, err)
	}
	if len(evs) == 0 {
		return engine.CommitResult{}, false, fmt.Errorf("input key %s refers to missing event %s", c.InputKey, ref)
	}
	res.Events = evs
	return res, true, nil
}

// insertEvents inserts evs, stamped by store.Log.Append, in order, in one
// round trip, and the audit entries they call for (store.AuditOfEvents).
func insertEvents(ctx context.Context, tx pgx.Tx, evs []engine.Event) error {
	if len(evs) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for _, ev := range evs {
		batch.Queue(`INSERT INTO events (session_id, seq, id, type, turn_id, created_at, data)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			ev.SessionID, ev.Seq, ev.ID, ev.Type, ev.TurnID, formatTime(ev.CreatedAt), string(ev.Data))
	}
	results := tx.SendBatch(ctx, batch)
	for _, ev := range evs {
		if _, err := results.Exec(); err != nil {
			results.Close()
			if isConstraint(err) {
				return engine.Errorf(engine.CodeConflict, "event %s already exists", ev.ID)
			}
			return fmt.Errorf("insert event %s: %w", ev.ID, err)
		}
	}
	if err := results.Close(); err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	_, err := appendAuditTx(ctx, tx, store.AuditOfEvents(evs))
	return err
}
