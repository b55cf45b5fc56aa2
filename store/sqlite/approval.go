package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"brain/engine"
	"brain/store"
)

// approvalColumns is the column list every approval query selects, in the
// order scanApproval reads them.
const approvalColumns = `id, session_id, turn_id, call_id, tool, agent, input, card, requested_by,
	status, decision_id, decided_by, decided_at, output, error, attempts,
	created_at, expires_at, updated_at,
	policy, required, forbid_self, votes, comment, reminded_at, message_id, decided_surface`

// Approval returns one approval, or an error matching engine.ErrNotFound.
func (s *Store) Approval(ctx context.Context, id string) (engine.Approval, error) {
	a, err := approvalByID(ctx, s.read, id)
	if err != nil {
		return engine.Approval{}, interpretError("get approval "+id, err)
	}
	return a, nil
}

// Approvals lists approvals newest first (created_at, then id, descending).
func (s *Store) Approvals(ctx context.Context, f engine.ApprovalFilter) ([]engine.Approval, error) {
	var (
		where []string
		args  []any
	)
	where, args = statusIn(where, args, f.Statuses)
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	if !f.ExpiresBefore.IsZero() {
		// Fixed-width UTC text compares in time order.
		where = append(where, "expires_at < ?")
		args = append(args, formatTime(f.ExpiresBefore))
	}
	where, args = deciderCondition(where, args, f.Decider)
	out, err := listNewestFirst(ctx, s.read, approvalColumns, "approvals", where, args, f.Limit, scanApproval)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return out, nil
}

// CommitApproval changes one approval and appends c.Events to its session
// in one immediate transaction; see engine.ApprovalCommit. The write lock is
// taken before the row is read, so c.Update always sees the committed state:
// of concurrent commits (from any process) whose Update checks the status,
// exactly one sees the old status. An error from c.Update is returned as is
// and nothing is written.
func (s *Store) CommitApproval(ctx context.Context, c engine.ApprovalCommit) (engine.Approval, []engine.Event, error) {
	if err := store.CheckApprovalCommit(c); err != nil {
		return engine.Approval{}, nil, err
	}
	op := "commit approval " + c.ID
	var (
		out    engine.Approval
		events []engine.Event
	)
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, events, err = commitApprovalTx(ctx, tx, c)
		return err
	})
	if err != nil {
		return engine.Approval{}, nil, interpretError(op, err)
	}
	return out, events, nil
}

func commitApprovalTx(ctx context.Context, tx *sql.Tx, c engine.ApprovalCommit) (engine.Approval, []engine.Event, error) {
	if err := checkFence(ctx, tx, "commit approval "+c.ID, c.Fence); err != nil {
		return engine.Approval{}, nil, err
	}
	cur, err := approvalByID(ctx, tx, c.ID)
	if err != nil {
		return engine.Approval{}, nil, err
	}
	next, evs, err := store.ApplyApproval(c, cur)
	if err != nil {
		return engine.Approval{}, nil, err
	}
	votes, err := json.Marshal(nonNilVotes(next.Votes))
	if err != nil {
		return engine.Approval{}, nil, fmt.Errorf("approval %s: votes: %w", c.ID, err)
	}
	now := c.Now.UTC()
	if _, err := tx.ExecContext(ctx, `UPDATE approvals SET status = ?, decision_id = ?, decided_by = ?,
			decided_at = ?, output = ?, error = ?, attempts = ?, updated_at = ?,
			votes = ?, comment = ?, reminded_at = ?, decided_surface = ?
		WHERE id = ?`,
		string(next.Status), next.DecisionID, next.DecidedBy, formatOptionalTime(next.DecidedAt),
		nullJSON(next.Output), next.Error, next.Attempts, formatTime(now),
		string(votes), next.Comment, formatOptionalTime(next.RemindedAt), next.DecidedSurface, c.ID); err != nil {
		return engine.Approval{}, nil, fmt.Errorf("update approval: %w", err)
	}

	var events []engine.Event
	if len(evs) > 0 {
		if events, err = appendToSession(ctx, tx, cur.SessionID, now, evs); err != nil {
			return engine.Approval{}, nil, err
		}
	}
	// Read back so the caller gets exactly what Approval will return.
	out, err := approvalByID(ctx, tx, c.ID)
	if err != nil {
		return engine.Approval{}, nil, err
	}
	return out, events, nil
}

// appendToSession appends evs to a session's log and moves its last_seq,
// last_input_seq and updated_at, as Commit does, leaving the rest of the
// row alone.
func appendToSession(ctx context.Context, tx *sql.Tx, sessionID string, now time.Time, evs []engine.Event) ([]engine.Event, error) {
	var log store.Log
	err := tx.QueryRowContext(ctx, `SELECT last_seq, last_input_seq FROM sessions WHERE id = ?`, sessionID).
		Scan(&log.LastSeq, &log.LastInputSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("session", sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", sessionID, err)
	}
	out := log.Append(sessionID, now, evs)
	if err := insertEvents(ctx, tx, out); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_seq = ?, last_input_seq = ?, updated_at = ? WHERE id = ?`,
		log.LastSeq, log.LastInputSeq, formatTime(now), sessionID); err != nil {
		return nil, fmt.Errorf("update session %s: %w", sessionID, err)
	}
	return out, nil
}

// insertApproval inserts a for Commit.NewApproval: it belongs to sessionID
// whatever a says, a zero CreatedAt or UpdatedAt becomes now, an empty
// Status becomes pending and an empty Input becomes {}.
func insertApproval(ctx context.Context, tx *sql.Tx, sessionID string, now time.Time, a engine.Approval) error {
	a = store.NewApproval(sessionID, now, a)
	card, err := json.Marshal(a.Card)
	if err != nil {
		return fmt.Errorf("insert approval %s: card: %w", a.ID, err)
	}
	votes, err := json.Marshal(nonNilVotes(a.Votes))
	if err != nil {
		return fmt.Errorf("insert approval %s: votes: %w", a.ID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.SessionID, a.TurnID, a.CallID, a.Tool, a.Agent, objectJSON(a.Input), string(card), a.RequestedBy,
		string(a.Status), a.DecisionID, a.DecidedBy, formatOptionalTime(a.DecidedAt), nullJSON(a.Output), a.Error, a.Attempts,
		formatTime(a.CreatedAt), formatTime(a.ExpiresAt), formatTime(a.UpdatedAt),
		a.Policy, a.Required, a.ForbidSelf, string(votes), a.Comment, formatOptionalTime(a.RemindedAt), a.MessageID, a.DecidedSurface)
	if isConstraint(err) {
		return engine.Errorf(engine.CodeConflict, "approval %s already exists", a.ID)
	}
	if err != nil {
		return fmt.Errorf("insert approval %s: %w", a.ID, err)
	}
	return nil
}

// approvalByID loads one approval, translating a missing row to
// engine.ErrNotFound.
func approvalByID(ctx context.Context, q queryer, id string) (engine.Approval, error) {
	row := q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id)
	a, err := scanApproval(row)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Approval{}, notFound("approval", id)
	}
	return a, err
}

// scanApproval reads approvalColumns.
func scanApproval(r scanner) (engine.Approval, error) {
	var (
		a                         engine.Approval
		status                    string
		input, card, output       []byte
		decided, reminded         string
		created, expires, updated string
		votes                     []byte
	)
	err := r.Scan(&a.ID, &a.SessionID, &a.TurnID, &a.CallID, &a.Tool, &a.Agent, &input, &card, &a.RequestedBy,
		&status, &a.DecisionID, &a.DecidedBy, &decided, &output, &a.Error, &a.Attempts,
		&created, &expires, &updated,
		&a.Policy, &a.Required, &a.ForbidSelf, &votes, &a.Comment, &reminded, &a.MessageID, &a.DecidedSurface)
	if err != nil {
		return engine.Approval{}, err
	}
	a.Status = engine.ApprovalStatus(status)
	a.Input = input
	a.Output = output // nil when NULL
	if err := json.Unmarshal(card, &a.Card); err != nil {
		return engine.Approval{}, fmt.Errorf("approval %s: card: %w", a.ID, err)
	}
	if a.DecidedAt, err = parseOptionalTime(decided); err != nil {
		return engine.Approval{}, err
	}
	if err := json.Unmarshal([]byte(votes), &a.Votes); err != nil {
		return engine.Approval{}, fmt.Errorf("approval %s: votes: %w", a.ID, err)
	}
	if len(a.Votes) == 0 {
		a.Votes = nil
	}
	if a.RemindedAt, err = parseOptionalTime(reminded); err != nil {
		return engine.Approval{}, err
	}
	if a.CreatedAt, err = parseTime(created); err != nil {
		return engine.Approval{}, err
	}
	if a.ExpiresAt, err = parseTime(expires); err != nil {
		return engine.Approval{}, err
	}
	if a.UpdatedAt, err = parseTime(updated); err != nil {
		return engine.Approval{}, err
	}
	return a, nil
}

// formatOptionalTime stores a zero time as the empty string, so "not yet"
// reads plainly in the table rather than as year 1.
func formatOptionalTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

func parseOptionalTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseTime(s)
}

// nonNilVotes stores "no votes" as [] rather than null.
func nonNilVotes(v []engine.Vote) []engine.Vote {
	if v == nil {
		return []engine.Vote{}
	}
	return v
}
