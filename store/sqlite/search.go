package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"brain/engine"
	"brain/store"
)

var (
	_ store.SessionSearch = (*Store)(nil)
	_ store.UsageReport   = (*Store)(nil)
)

// ListSessions lists the sessions q selects, newest first, from the
// indexes migration 0019 keeps: the filters' indexes on sessions, the
// people table and the FTS4 table of the messages' words.
func (s *Store) ListSessions(ctx context.Context, q store.SessionQuery) ([]engine.Session, string, error) {
	cur, err := store.ParseSessionCursor(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	var (
		where []string
		args  []any
	)
	add := func(cond string, vals ...any) {
		where = append(where, cond)
		args = append(args, vals...)
	}
	if q.ID != "" {
		add("id = ?", q.ID)
	}
	if q.Status != "" {
		add("status = ?", string(q.Status))
	}
	if q.Origin != "" {
		add("origin = ?", string(q.Origin))
	}
	if q.Agent != "" {
		add("agent = ?", q.Agent)
	}
	if q.Person != "" {
		add("id IN (SELECT session_id FROM search_people WHERE person = ?)", q.Person)
	}
	if !q.Since.IsZero() {
		add("created_at >= ?", formatTime(q.Since))
	}
	if !q.Until.IsZero() {
		add("created_at < ?", formatTime(q.Until))
	}
	if q.Text != "" {
		terms := store.SearchTerms(q.Text)
		if len(terms) == 0 {
			return nil, "", nil // no word to look for: nothing matches
		}
		// Each word in some message of the session (not all in one).
		for _, t := range terms {
			add("id IN (SELECT session_id FROM search_text WHERE body MATCH ?)", `"`+t+`"`)
		}
	}
	if cur.ID != "" {
		add("(created_at < ? OR (created_at = ? AND id < ?))", cur.CreatedAt, cur.CreatedAt, cur.ID)
	}
	limit := q.PageLimit()
	// One more than the page tells whether another follows.
	list, err := listNewestFirst(ctx, s.read, sessionColumns, "sessions", where, args, limit+1,
		func(r scanner) (engine.Session, error) { return scanSession(r) })
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	if len(list) <= limit {
		return list, "", nil
	}
	list = list[:limit]
	last := list[limit-1]
	return list, store.SessionCursor{CreatedAt: formatTime(last.CreatedAt), ID: last.ID}.Encode(), nil
}

// Usage sums turn.completed events' usage in [since, until) by day,
// agent, person and origin.
func (s *Store) Usage(ctx context.Context, since, until time.Time) ([]store.UsageRow, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT substr(e.created_at, 1, 10) AS day, s.agent, s.started_by, s.origin, count(*),
			coalesce(sum(json_extract(e.data, '$.usage.input_tokens')), 0),
			coalesce(sum(json_extract(e.data, '$.usage.output_tokens')), 0),
			coalesce(sum(json_extract(e.data, '$.usage.cache_read_input_tokens')), 0),
			coalesce(sum(json_extract(e.data, '$.usage.cache_creation_input_tokens')), 0)
		FROM events e JOIN sessions s ON s.id = e.session_id
		WHERE e.type = 'turn.completed' AND e.created_at >= ? AND e.created_at < ? AND json_valid(e.data)
		GROUP BY day, s.agent, s.started_by, s.origin
		ORDER BY day, s.agent, s.started_by, s.origin`, formatTime(since), formatTime(until))
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	defer rows.Close()
	var out []store.UsageRow
	for rows.Next() {
		var u store.UsageRow
		var origin string
		if err := rows.Scan(&u.Day, &u.Agent, &u.Person, &origin, &u.Turns,
			&u.Usage.InputTokens, &u.Usage.OutputTokens, &u.Usage.CacheReadTokens, &u.Usage.CacheWriteTokens); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
		u.Origin = engine.Origin(origin)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return out, nil
}

// derivedTable reports whether a table is rebuilt from others by
// triggers (migration 0019's search_*), so brain migrate leaves it out.
func derivedTable(name string) bool { return strings.HasPrefix(name, "search_") }
