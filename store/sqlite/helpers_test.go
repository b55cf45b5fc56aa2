package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"brain/engine"
	"brain/store/sqlite"
)

// t0 has a nanosecond part and a non-UTC zone so tests catch precision and
// location bugs in the time round-trip.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

func openStore(tb testing.TB) (*sqlite.Store, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "brain.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return st, path
}

// twoStores opens the same file twice, as two processes would: they share
// no connection pool, so only SQLite's locking keeps them apart.
func twoStores(tb testing.TB) [2]*sqlite.Store {
	tb.Helper()
	a, path := openStore(tb)
	b, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("second Open: %v", err)
	}
	tb.Cleanup(func() { b.Close() })
	return [2]*sqlite.Store{a, b}
}

func newStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	st, _ := openStore(tb)
	return st
}

func testSession(id string, created time.Time) engine.Session {
	return engine.Session{
		ID:          id,
		Agent:       "default",
		Origin:      engine.OriginAPI,
		Interactive: true,
		StartedBy:   "U123",
		Status:      engine.StatusIdle,
		CreatedAt:   created,
		UpdatedAt:   created,
	}
}

func createSession(tb testing.TB, st engine.Store, s engine.Session) engine.Session {
	tb.Helper()
	got, created, err := st.CreateSession(context.Background(), s, "")
	if err != nil {
		tb.Fatalf("CreateSession(%s): %v", s.ID, err)
	}
	if !created {
		tb.Fatalf("CreateSession(%s): created = false", s.ID)
	}
	return got
}

func userMessage(id, text string) engine.Event {
	data, _ := json.Marshal(map[string]string{"text": text})
	return engine.Event{ID: id, Type: engine.EventUserMessage, Data: data}
}

func commit(tb testing.TB, st engine.Store, c engine.Commit) engine.CommitResult {
	tb.Helper()
	if c.Now.IsZero() {
		c.Now = t0
	}
	res, err := st.Commit(context.Background(), c)
	if err != nil {
		tb.Fatalf("Commit(%s): %v", c.SessionID, err)
	}
	return res
}

func seqs(evs []engine.Event) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

func ids(evs []engine.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func sessionIDs(ss []engine.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// eventID makes distinct, readable event ids for loops.
func eventID(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }
