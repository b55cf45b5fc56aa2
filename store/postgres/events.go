package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"brain/engine"
)

// eventColumns is the column list queryEvents reads, in order.
const eventColumns = `session_id, seq, id, type, turn_id, created_at, data`

// Events returns up to limit events of a session with seq > after, ordered
// by seq; limit <= 0 means all. An unknown session is engine.ErrNotFound.
func (s *Store) Events(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error) {
	q := `SELECT ` + eventColumns + ` FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq`
	args := []any{sessionID, after}
	if limit > 0 {
		q += ` LIMIT $3`
		args = append(args, limit)
	}
	evs, err := queryEvents(ctx, s.pool, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", sessionID, err)
	}
	if len(evs) == 0 {
		// Only an empty page needs to tell "no events" from "no session".
		if err := s.sessionExists(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// Results returns every committed result of a session, oldest first. An
// unknown session is engine.ErrNotFound.
func (s *Store) Results(ctx context.Context, sessionID string) ([]engine.ResultRecord, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT turn_id, call_id, reported_at, data FROM results WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list results of %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []engine.ResultRecord
	for rows.Next() {
		var (
			r        engine.ResultRecord
			reported string
			data     string
		)
		if err := rows.Scan(&r.TurnID, &r.CallID, &reported, &data); err != nil {
			return nil, fmt.Errorf("list results of %s: %w", sessionID, err)
		}
		r.Data = json.RawMessage(data)
		if r.ReportedAt, err = parseTime(reported); err != nil {
			return nil, fmt.Errorf("list results of %s: %w", sessionID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list results of %s: %w", sessionID, err)
	}
	if len(out) == 0 {
		if err := s.sessionExists(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sessionExists returns nil when the session exists, else an error
// matching engine.ErrNotFound.
func (s *Store) sessionExists(ctx context.Context, id string) error {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("session", id)
	}
	if err != nil {
		return fmt.Errorf("get session %s: %w", id, err)
	}
	return nil
}

// queryEvents runs a query selecting eventColumns and reads every row.
func queryEvents(ctx context.Context, q querier, query string, args ...any) ([]engine.Event, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []engine.Event
	for rows.Next() {
		var (
			ev      engine.Event
			created string
			data    string
		)
		if err := rows.Scan(&ev.SessionID, &ev.Seq, &ev.ID, &ev.Type, &ev.TurnID, &created, &data); err != nil {
			return nil, err
		}
		t, err := parseTime(created)
		if err != nil {
			return nil, err
		}
		ev.CreatedAt = t
		ev.Data = json.RawMessage(data)
		out = append(out, ev)
	}
	return out, rows.Err()
}
