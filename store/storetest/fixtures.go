package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"brain/engine"
	"brain/tools"
)

// The fixtures and helpers below are the suite's own, exported so that an
// implementation's tests of what only it does (its file format, its
// migrations, benchmarks) build the same sessions and approvals.

// T0 has a nanosecond part and a non-UTC zone so tests catch precision and
// location bugs in the time round-trip.
var T0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

// Session is an idle interactive API session created (and last updated)
// at created.
func Session(id string, created time.Time) engine.Session {
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

// Approval is a pending approval requested at created, expiring an hour
// later; its card has text that needs escaping.
func Approval(id string, created time.Time) engine.Approval {
	return engine.Approval{
		ID:     id,
		TurnID: "t1",
		CallID: "call-" + id,
		Tool:   "linear_create_issue",
		Agent:  "default",
		Input:  json.RawMessage(`{"team":"ENG","title":"Fix login"}`),
		Card: tools.Card{Title: "Create issue", Facts: []tools.Fact{
			{Label: "Team", Value: "ENG"},
			{Label: "Title", Value: "Fix login — \"quoted\" & <escaped>"},
		}},
		RequestedBy: "U123",
		MessageID:   "msg-" + id,
		Status:      engine.ApprovalPending,
		CreatedAt:   created,
		ExpiresAt:   created.Add(time.Hour),
		UpdatedAt:   created,
	}
}

// CreateSession creates s with no idempotency key and fails tb unless it
// is new.
func CreateSession(tb testing.TB, st engine.Store, s engine.Session) engine.Session {
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

// Commit commits c (at T0 when c.Now is zero) and fails tb on an error.
func Commit(tb testing.TB, st engine.Store, c engine.Commit) engine.CommitResult {
	tb.Helper()
	if c.Now.IsZero() {
		c.Now = T0
	}
	res, err := st.Commit(context.Background(), c)
	if err != nil {
		tb.Fatalf("Commit(%s): %v", c.SessionID, err)
	}
	return res
}

// EventID makes distinct, readable event ids for loops.
func EventID(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }
