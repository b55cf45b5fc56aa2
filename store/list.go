package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"brain/engine"
)

// SessionLister answers the session lists the console, App Home and the
// CLI show, in the database: filtered, newest activity first, a page at a
// time, each filter served by an index (migration 0017), so a list costs
// the same at 100 sessions as at 100,000.
type SessionLister interface {
	ListSessions(ctx context.Context, q SessionQuery) (SessionPage, error)
}

// SessionQuery filters a session list; zero fields do not filter.
type SessionQuery struct {
	Status engine.Status
	Origin engine.Origin
	Agent  string
	// Person is who started the session (Session.StartedBy).
	Person string
	// Since and Until bound the last activity (Session.UpdatedAt): Since
	// inclusive, Until exclusive.
	Since, Until time.Time
	// Text is a full-text search; no driver offers it yet, and a query
	// with it is refused (engine.CodeInvalid) rather than answered
	// unfiltered.
	Text string
	// Cursor is SessionPage.Next of the page before; "" starts at the
	// newest activity.
	Cursor string
	// Limit is the page's size: DefaultSessionLimit when 0, at most
	// MaxSessionLimit.
	Limit int
}

// The sizes of a session page.
const (
	DefaultSessionLimit = 50
	MaxSessionLimit     = 500
)

// SessionPage is one page of a session list, newest activity first (then
// id, descending); Next, when not "", is the cursor of the page after.
type SessionPage struct {
	Sessions []engine.Session
	Next     string
}

// SessionCursor is where a page ends: the last session's activity and id.
type SessionCursor struct {
	UpdatedAt time.Time
	ID        string
}

// CheckSessionQuery validates q and returns its page size and decoded
// cursor (zero when q starts at the newest), as every driver checks a
// query before any I/O.
func CheckSessionQuery(q SessionQuery) (limit int, cur SessionCursor, err error) {
	if q.Text != "" {
		return 0, cur, engine.Errorf(engine.CodeInvalid, "list sessions: text search is not supported by this store")
	}
	switch {
	case q.Limit < 0:
		return 0, cur, engine.Errorf(engine.CodeInvalid, "list sessions: limit must not be negative")
	case q.Limit == 0:
		limit = DefaultSessionLimit
	default:
		limit = min(q.Limit, MaxSessionLimit)
	}
	if q.Cursor != "" {
		if cur, err = decodeCursor(q.Cursor); err != nil {
			return 0, cur, engine.Errorf(engine.CodeInvalid, "list sessions: the cursor is not one a page returned")
		}
	}
	return limit, cur, nil
}

// NextCursor is the SessionPage.Next of a page of rows read with one row
// more than limit: "" when there is no page after.
func NextCursor(rows []engine.Session, limit int) ([]engine.Session, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	last := rows[limit-1]
	return rows[:limit], encodeCursor(SessionCursor{UpdatedAt: last.UpdatedAt, ID: last.ID})
}

// The cursor is opaque to callers: base64url of "RFC3339Nano|id".
func encodeCursor(c SessionCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.UpdatedAt.UTC().Format(time.RFC3339Nano) + "|" + c.ID))
}

func decodeCursor(s string) (SessionCursor, error) {
	if len(s) > 1024 {
		return SessionCursor{}, fmt.Errorf("cursor too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return SessionCursor{}, err
	}
	at, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" {
		return SessionCursor{}, fmt.Errorf("malformed cursor")
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return SessionCursor{}, err
	}
	return SessionCursor{UpdatedAt: t, ID: id}, nil
}
