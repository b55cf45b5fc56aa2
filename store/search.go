package store

import (
	"context"
	"encoding/base64"
	"strings"
	"time"
	"unicode"

	"brain/engine"
)

// SessionQuery selects sessions for the console's list and search, done
// by the database with indexes (never by reading logs), newest first.
// Zero fields do not filter.
type SessionQuery struct {
	// ID keeps only the session of that id: with Person, whether the
	// person took part in it, by the index (the console's access check).
	ID     string
	Status engine.Status
	Origin engine.Origin
	Agent  string
	// Person keeps sessions the person started or wrote a message in.
	Person string
	// Since and Until bound the session's creation time: Since <= created
	// < Until.
	Since, Until time.Time
	// Text keeps sessions whose messages, people or agent contain every
	// word of it (whole words, case-insensitive); see SearchTerms.
	Text string
	// Cursor continues a listing where the page that returned it ended.
	Cursor string
	// Limit caps the page (default and maximum MaxSessionPage).
	Limit int
}

// MaxSessionPage caps one page of ListSessions.
const MaxSessionPage = 200

// SessionSearch lists sessions by a SessionQuery. Paging is by keyset:
// next is the cursor of the following page, "" after the last; a page
// stays correct while sessions are added (new ones sort first).
type SessionSearch interface {
	ListSessions(ctx context.Context, q SessionQuery) (sessions []engine.Session, next string, err error)
}

// Search limits on hostile input: a query's words are few and short.
const (
	maxSearchTerms = 8
	maxSearchTerm  = 64
)

// SearchTerms splits text into the words a full-text search matches:
// letters and digits, lower-cased, at most 8 words of at most 64 bytes.
// Everything else separates words, so no query syntax of either
// database's full-text language reaches it.
func SearchTerms(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var out []string
	for _, f := range fields {
		if len(f) > maxSearchTerm || len(out) == maxSearchTerms {
			continue
		}
		out = append(out, f)
	}
	return out
}

// SessionCursor is the position a page of sessions ended at: the last
// session's creation time (the drivers' fixed-width text) and id.
type SessionCursor struct {
	CreatedAt string
	ID        string
}

// errBadCursor is the answer to a cursor this package did not make.
var errBadCursor = &engine.Error{Code: engine.CodeInvalid, Message: "The page cursor is not valid; start from the first page."}

// Encode makes the opaque text a page hands out.
func (c SessionCursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.CreatedAt + "\x00" + c.ID))
}

// ParseSessionCursor reads a cursor made by Encode; "" is the first page
// (zero cursor, no error). Anything else is an engine.CodeInvalid error.
func ParseSessionCursor(s string) (SessionCursor, error) {
	if s == "" {
		return SessionCursor{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) > 512 {
		return SessionCursor{}, errBadCursor
	}
	at, id, ok := strings.Cut(string(raw), "\x00")
	if !ok || at == "" || id == "" {
		return SessionCursor{}, errBadCursor
	}
	return SessionCursor{CreatedAt: at, ID: id}, nil
}

// PageLimit is q's page size, bounded.
func (q SessionQuery) PageLimit() int {
	if q.Limit <= 0 || q.Limit > MaxSessionPage {
		return MaxSessionPage
	}
	return q.Limit
}
