package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/engine"
	"brain/store"
)

var (
	_ store.SessionSearch = (*Store)(nil)
	_ store.UsageReport   = (*Store)(nil)
)

// derivedTables are migration 0019's tables, kept by triggers from
// sessions and events; brain migrate leaves them out.
var derivedTables = []string{"search_people", "search_text"}

// ListSessions lists the sessions q selects, newest first, from the
// indexes migration 0019 keeps: the filters' indexes on sessions, the
// people table and the GIN index of the messages' words.
func (s *Store) ListSessions(ctx context.Context, q store.SessionQuery) ([]engine.Session, string, error) {
	cur, err := store.ParseSessionCursor(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	var c conditions
	if q.ID != "" {
		c.add("id = " + c.arg(q.ID))
	}
	if q.Status != "" {
		c.add("status = " + c.arg(string(q.Status)))
	}
	if q.Origin != "" {
		c.add("origin = " + c.arg(string(q.Origin)))
	}
	if q.Agent != "" {
		c.add("agent = " + c.arg(q.Agent))
	}
	if q.Person != "" {
		c.add("id IN (SELECT session_id FROM search_people WHERE person = " + c.arg(q.Person) + ")")
	}
	if !q.Since.IsZero() {
		c.add("created_at >= " + c.arg(formatTime(q.Since)))
	}
	if !q.Until.IsZero() {
		c.add("created_at < " + c.arg(formatTime(q.Until)))
	}
	if q.Text != "" {
		terms := store.SearchTerms(q.Text)
		if len(terms) == 0 {
			return nil, "", nil // no word to look for: nothing matches
		}
		// Each word in some message of the session (not all in one). The
		// terms are letters and digits only; plainto_tsquery reads them
		// as words whatever they are.
		for _, t := range terms {
			rare, err := s.rareWord(ctx, t)
			if err != nil {
				return nil, "", fmt.Errorf("list sessions: %w", err)
			}
			match := "SELECT session_id FROM search_text WHERE body @@ plainto_tsquery('simple', " + c.arg(t) + ")"
			if rare {
				// The word's few sessions first (ARRAY makes it an init
				// plan), then those by index: left to itself, the planner
				// guesses a rare word common and walks every session
				// newest first, testing each (0.2-0.4 s at 100,000).
				c.add("id = ANY(ARRAY(" + match + "))")
			} else {
				c.add("id IN (" + match + ")")
			}
		}
	}
	if cur.ID != "" {
		at := c.arg(cur.CreatedAt)
		c.add("(created_at < " + at + " OR (created_at = " + at + " AND id < " + c.arg(cur.ID) + "))")
	}
	limit := q.PageLimit()
	// One more than the page tells whether another follows.
	list, err := listNewestFirst(ctx, s.pool, sessionColumns, "sessions", c, limit+1,
		func(r pgx.Row) (engine.Session, error) { return scanSession(r) })
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

// rareWordRows is the number of messages holding a word below which the
// word's sessions are looked up first (ListSessions).
const rareWordRows = 1000

// rareWord reports whether fewer than rareWordRows messages hold word,
// counting no further than that through the GIN index.
func (s *Store) rareWord(ctx context.Context, word string) (bool, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM search_text
		WHERE body @@ plainto_tsquery('simple', $1) LIMIT $2) m`, word, rareWordRows).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("count matches of a word: %w", err)
	}
	return n < rareWordRows, nil
}

// Usage sums turn.completed events' usage in [since, until) by day,
// agent, person and origin.
func (s *Store) Usage(ctx context.Context, since, until time.Time) ([]store.UsageRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT substr(e.created_at, 1, 10) AS day, s.agent, s.started_by, s.origin, count(*),
			coalesce(sum((e.data::json->'usage'->>'input_tokens')::bigint), 0),
			coalesce(sum((e.data::json->'usage'->>'output_tokens')::bigint), 0),
			coalesce(sum((e.data::json->'usage'->>'cache_read_input_tokens')::bigint), 0),
			coalesce(sum((e.data::json->'usage'->>'cache_creation_input_tokens')::bigint), 0)
		FROM events e JOIN sessions s ON s.id = e.session_id
		WHERE e.type = 'turn.completed' AND e.created_at >= $1 AND e.created_at < $2
		GROUP BY day, s.agent, s.started_by, s.origin
		ORDER BY day, s.agent COLLATE "C", s.started_by COLLATE "C", s.origin COLLATE "C"`, formatTime(since), formatTime(until))
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
