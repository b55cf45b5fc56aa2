package sqlite

import (
	"context"
	"fmt"
	"strings"

	"brain/engine"
	"brain/store"
)

// ListSessions lists sessions newest activity first, a page at a time;
// see store.SessionLister. Each filter is served by an index of migration
// 0017, the cursor by their (updated_at, id) order.
func (s *Store) ListSessions(ctx context.Context, q store.SessionQuery) (store.SessionPage, error) {
	limit, cur, err := store.CheckSessionQuery(q)
	if err != nil {
		return store.SessionPage{}, err
	}
	var (
		where []string
		args  []any
	)
	eq := func(col, v string) {
		if v != "" {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	eq("status", string(q.Status))
	eq("origin", string(q.Origin))
	eq("agent", q.Agent)
	eq("started_by", q.Person)
	if !q.Since.IsZero() {
		where = append(where, "updated_at >= ?")
		args = append(args, formatTime(q.Since))
	}
	if !q.Until.IsZero() {
		where = append(where, "updated_at < ?")
		args = append(args, formatTime(q.Until))
	}
	if cur.ID != "" {
		at := formatTime(cur.UpdatedAt)
		where = append(where, "(updated_at < ? OR (updated_at = ? AND id < ?))")
		args = append(args, at, at, cur.ID)
	}
	query := `SELECT ` + sessionColumns + ` FROM sessions`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY updated_at DESC, id DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []engine.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return store.SessionPage{}, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return store.SessionPage{}, fmt.Errorf("list sessions: %w", err)
	}
	page := store.SessionPage{}
	page.Sessions, page.Next = store.NextCursor(out, limit)
	return page, nil
}
