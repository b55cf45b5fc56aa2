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
	"brain/tools"
)

// The store-generic tests are engine/storetest's (conformance_test.go runs
// them); these helpers serve the SQLite-specific ones: migrations, options,
// the file's columns, benchmarks.

// t0 has a nanosecond part and a non-UTC zone so tests catch precision and
// location bugs in the time round-trip.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

func openStore(tb testing.TB) (*sqlite.Store, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "brain.db")
	return openAt(tb, path), path
}

// openAt opens the file at path, closed when tb ends.
func openAt(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
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

func testApproval(id string, created time.Time) engine.Approval {
	return engine.Approval{
		ID:          id,
		TurnID:      "t1",
		CallID:      "call-" + id,
		Tool:        "linear_create_issue",
		Agent:       "default",
		Input:       json.RawMessage(`{"team":"ENG","title":"Fix login"}`),
		Card:        tools.Card{Title: "Create issue", Facts: []tools.Fact{{Label: "Team", Value: "ENG"}}},
		RequestedBy: "U123",
		Status:      engine.ApprovalPending,
		CreatedAt:   created,
		ExpiresAt:   created.Add(time.Hour),
		UpdatedAt:   created,
	}
}

// eventID makes distinct, readable event ids for loops.
func eventID(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }
