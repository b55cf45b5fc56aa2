package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	a, err := approvalByID(ctx, s.pool, id, "")
	if err != nil {
		return engine.Approval{}, interpretError("get approval "+id, err)
	}
	return a, nil
}

// Approvals lists approvals newest first (created_at, then id, descending).
func (s *Store) Approvals(ctx context.Context, f engine.ApprovalFilter) ([]engine.Approval, error) {
	var q conditions
	statusIn(&q, f.Statuses)
	if f.SessionID != "" {
		q.add("session_id = " + q.arg(f.SessionID))
	}
	if !f.ExpiresBefore.IsZero() {
		// Fixed-width UTC text compares in time order.
		q.add("expires_at < " + q.arg(formatTime(f.ExpiresBefore)))
	}
	deciderCondition(&q, f.Decider)
	out, err := listNewestFirst(ctx, s.pool, approvalColumns, "approvals", q, f.Limit, scanApproval)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return out, nil
}

// CommitApproval changes one approval and appends c.Events to its session
// in one transaction; see engine.ApprovalCommit. The approval row is locked
// (SELECT ... FOR UPDATE) before c.Update sees it, so c.Update always sees
// the committed state: of concurrent commits (from any process) whose
// Update checks the status, exactly one sees the old status, which makes a
// decision single-use. An error from c.Update is returned as is and nothing
// is written.
func (s *Store) CommitApproval(ctx context.Context, c engine.ApprovalCommit) (engine.Approval, []engine.Event, error) {
	if err := store.CheckApprovalCommit(c); err != nil {
		return engine.Approval{}, nil, err
	}
	op := "commit approval " + c.ID
	if err := eventsText(op, c.Events); err != nil {
		return engine.Approval{}, nil, err
	}
	var (
		out    engine.Approval
		events []engine.Event
	)
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, events, err = commitApprovalTx(ctx, tx, c)
		return err
	})
	if err != nil {
		return engine.Approval{}, nil, interpretError(op, err)
	}
	return out, events, nil
}

func commitApprovalTx(ctx context.Context, tx pgx.Tx, c engine.ApprovalCommit) (engine.Approval, []engine.Event, error) {
	// The lease first, then the approval and its session, as Commit.
	if err := checkFence(ctx, tx, "commit approval "+c.ID, c.Fence); err != nil {
		return engine.Approval{}, nil, err
	}
	cur, err := approvalByID(ctx, tx, c.ID, "FOR UPDATE")
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
	if err := validText("commit approval "+c.ID+": output", next.Output); err != nil {
		return engine.Approval{}, nil, err
	}
	now := c.Now.UTC()
	if _, err := tx.Exec(ctx, `UPDATE approvals SET status = $1, decision_id = $2, decided_by = $3,
			decided_at = $4, output = $5, error = $6, attempts = $7, updated_at = $8,
			votes = $9, comment = $10, reminded_at = $11, decided_surface = $12
		WHERE id = $13`,
		string(next.Status), next.DecisionID, next.DecidedBy, optionalTime(next.DecidedAt),
		nullJSON(next.Output), next.Error, next.Attempts, formatTime(now),
		string(votes), next.Comment, optionalTime(next.RemindedAt), next.DecidedSurface, c.ID); err != nil {
		return engine.Approval{}, nil, fmt.Errorf("update approval: %w", err)
	}

	var events []engine.Event
	if len(evs) > 0 {
		if events, err = appendToSession(ctx, tx, cur.SessionID, now, evs); err != nil {
			return engine.Approval{}, nil, err
		}
	}
	// Read back so the caller gets exactly what Approval will return.
	out, err := approvalByID(ctx, tx, c.ID, "")
	if err != nil {
		return engine.Approval{}, nil, err
	}
	return out, events, nil
}

// appendToSession appends evs to a session's log and moves its last_seq,
// last_input_seq and updated_at, as Commit does, leaving the rest of the
// row alone. It locks the row as Commit does; the approval is locked
// first, and Commit never locks an existing approval, so the two cannot
// deadlock.
func appendToSession(ctx context.Context, tx pgx.Tx, sessionID string, now time.Time, evs []engine.Event) ([]engine.Event, error) {
	var log store.Log
	err := tx.QueryRow(ctx, `SELECT last_seq, last_input_seq FROM sessions WHERE id = $1 FOR UPDATE`, sessionID).
		Scan(&log.LastSeq, &log.LastInputSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("session", sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", sessionID, err)
	}
	out := log.Append(sessionID, now, evs)
	if err := insertEvents(ctx, tx, out); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions SET last_seq = $1, last_input_seq = $2, updated_at = $3 WHERE id = $4`,
		log.LastSeq, log.LastInputSeq, formatTime(now), sessionID); err != nil {
		return nil, fmt.Errorf("update session %s: %w", sessionID, err)
	}
	return out, nil
}

// insertApproval inserts a for Commit.NewApproval: it belongs to sessionID
// whatever a says, a zero CreatedAt or UpdatedAt becomes now, an empty
// Status becomes pending and an empty Input becomes {}.
func insertApproval(ctx context.Context, tx pgx.Tx, sessionID string, now time.Time, a engine.Approval) error {
	a = store.NewApproval(sessionID, now, a)
	card, err := json.Marshal(a.Card)
	if err != nil {
		return fmt.Errorf("insert approval %s: card: %w", a.ID, err)
	}
	votes, err := json.Marshal(nonNilVotes(a.Votes))
	if err != nil {
		return fmt.Errorf("insert approval %s: votes: %w", a.ID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO approvals (`+approvalColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
			$20, $21, $22, $23, $24, $25, $26, $27)`,
		a.ID, a.SessionID, a.TurnID, a.CallID, a.Tool, a.Agent, objectJSON(a.Input), string(card), a.RequestedBy,
		string(a.Status), a.DecisionID, a.DecidedBy, optionalTime(a.DecidedAt), nullJSON(a.Output), a.Error, a.Attempts,
		formatTime(a.CreatedAt), formatTime(a.ExpiresAt), formatTime(a.UpdatedAt),
		a.Policy, a.Required, a.ForbidSelf, string(votes), a.Comment, optionalTime(a.RemindedAt), a.MessageID, a.DecidedSurface)
	if isConstraint(err) {
		return engine.Errorf(engine.CodeConflict, "approval %s already exists", a.ID)
	}
	if err != nil {
		return fmt.Errorf("insert approval %s: %w", a.ID, err)
	}
	return nil
}

// approvalByID loads one approval (with lock, e.g. "FOR UPDATE", appended
// to the query), translating a missing row to engine.ErrNotFound.
func approvalByID(ctx context.Context, q querier, id, lock string) (engine.Approval, error) {
	row := q.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1 `+lock, id)
	a, err := scanApproval(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Approval{}, notFound("approval", id)
	}
	return a, err
}

// scanApproval reads approvalColumns.
func scanApproval(r pgx.Row) (engine.Approval, error) {
	var (
		a                         engine.Approval
		status                    string
		input, card               string
		output                    *string
		decided, reminded         *string
		created, expires, updated string
		votes                     string
	)
	err := r.Scan(&a.ID, &a.SessionID, &a.TurnID, &a.CallID, &a.Tool, &a.Agent, &input, &card, &a.RequestedBy,
		&status, &a.DecisionID, &a.DecidedBy, &decided, &output, &a.Error, &a.Attempts,
		&created, &expires, &updated,
		&a.Policy, &a.Required, &a.ForbidSelf, &votes, &a.Comment, &reminded, &a.MessageID, &a.DecidedSurface)
	if err != nil {
		return engine.Approval{}, err
	}
	a.Status = engine.ApprovalStatus(status)
	a.Input = json.RawMessage(input)
	a.Output = readJSON(output) // nil when NULL
	if err := json.Unmarshal([]byte(card), &a.Card); err != nil {
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

// nonNilVotes stores "no votes" as [] rather than null.
func nonNilVotes(v []engine.Vote) []engine.Vote {
	if v == nil {
		return []engine.Vote{}
	}
	return v
}
