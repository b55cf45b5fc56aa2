package postgres

import (
	"brain/engine"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

// DeliveryCursor returns the seq of the last event of the session delivered
// to origin's platform, 0 when none was.
func (s *Store) DeliveryCursor(ctx context.Context, origin engine.Origin, sessionID string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx,
		`SELECT seq FROM delivery_cursors WHERE origin = $1 AND session_id = $2`, origin, sessionID).Scan(&seq)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("get %s delivery cursor of %s: %w", origin, sessionID, err)
	}
	return seq, nil
}

// SetDeliveryCursor records seq as the last event delivered.
func (s *Store) SetDeliveryCursor(ctx context.Context, now time.Time, origin engine.Origin, sessionID string, seq int64) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO delivery_cursors (origin, session_id, seq, updated_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (origin, session_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at`,
		origin, sessionID, seq, formatTime(now))
	if err != nil {
		return fmt.Errorf("set %s delivery cursor of %s: %w", origin, sessionID, err)
	}
	return nil
}

// ApprovalMessage returns the reference of the message showing the
// approval's card on platform.
func (s *Store) ApprovalMessage(ctx context.Context, platform engine.Origin, approvalID string) (string, bool, error) {
	var ref string
	err := s.pool.QueryRow(ctx,
		`SELECT message_ref FROM approval_messages WHERE platform = $1 AND approval_id = $2`, platform, approvalID).Scan(&ref)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get %s message of approval %s: %w", platform, approvalID, err)
	}
	return ref, true, nil
}

// SetApprovalMessage records ref as the approval's card on platform.
func (s *Store) SetApprovalMessage(ctx context.Context, now time.Time, platform engine.Origin, approvalID, ref string) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO approval_messages (platform, approval_id, message_ref, updated_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (platform, approval_id) DO UPDATE SET message_ref = excluded.message_ref, updated_at = excluded.updated_at`,
		platform, approvalID, ref, formatTime(now))
	if err != nil {
		return fmt.Errorf("set %s message of approval %s: %w", platform, approvalID, err)
	}
	return nil
}

// PostedQuestion returns the session's open question as posted on platform.
func (s *Store) PostedQuestion(ctx context.Context, platform engine.Origin, sessionID string) (store.PostedQuestion, bool, error) {
	var (
		q        store.PostedQuestion
		question string
	)
	err := s.pool.QueryRow(ctx,
		`SELECT message_ref, question FROM posted_questions WHERE platform = $1 AND session_id = $2`,
		platform, sessionID).Scan(&q.MessageRef, &question)
	if err == nil {
		err = json.Unmarshal([]byte(question), &q.Question)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.PostedQuestion{}, false, nil
	case err != nil:
		return store.PostedQuestion{}, false, fmt.Errorf("get %s question of %s: %w", platform, sessionID, err)
	}
	return q, true, nil
}

// SetPostedQuestion records q as the session's open question on platform.
func (s *Store) SetPostedQuestion(ctx context.Context, now time.Time, platform engine.Origin, sessionID string, q store.PostedQuestion) error {
	question, err := json.Marshal(q.Question)
	if err != nil {
		return fmt.Errorf("set %s question of %s: %w", platform, sessionID, err)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO posted_questions (platform, session_id, message_ref, question, updated_at) VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (platform, session_id) DO UPDATE SET
		   message_ref = excluded.message_ref, question = excluded.question, updated_at = excluded.updated_at`,
		platform, sessionID, q.MessageRef, string(question), formatTime(now))
	if err != nil {
		return fmt.Errorf("set %s question of %s: %w", platform, sessionID, err)
	}
	return nil
}

// ClearPostedQuestion forgets the session's open question on platform.
func (s *Store) ClearPostedQuestion(ctx context.Context, platform engine.Origin, sessionID string) error {
	_, err := s.pool.Exec(ctx,
		`DELETE FROM posted_questions WHERE platform = $1 AND session_id = $2`, platform, sessionID)
	if err != nil {
		return fmt.Errorf("clear %s question of %s: %w", platform, sessionID, err)
	}
	return nil
}

// ThreadContext returns the note left for the thread.
func (s *Store) ThreadContext(ctx context.Context, threadKey string) (string, bool, error) {
	var note string
	err := s.pool.QueryRow(ctx, `SELECT note FROM thread_contexts WHERE thread_key = $1`, threadKey).Scan(&note)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get context of thread %s: %w", threadKey, err)
	}
	return note, true, nil
}

// SetThreadContext leaves note for the thread.
func (s *Store) SetThreadContext(ctx context.Context, now time.Time, threadKey, note string) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO thread_contexts (thread_key, note, updated_at) VALUES ($1, $2, $3)
		 ON CONFLICT (thread_key) DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at`,
		threadKey, note, formatTime(now))
	if err != nil {
		return fmt.Errorf("set context of thread %s: %w", threadKey, err)
	}
	return nil
}
