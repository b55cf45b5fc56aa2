package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// searchFixture makes five sessions an hour apart (s0 oldest) with
// different statuses, origins, agents and people, and messages to find.
func searchFixture(t *testing.T, st store.Store) {
	t.Helper()
	type msg struct{ typ, author, text string }
	fixtures := []struct {
		id     string
		status engine.Status
		origin engine.Origin
		agent  string
		by     string
		msgs   []msg
	}{
		{"s0", engine.StatusIdle, engine.OriginAPI, "default", "alice", []msg{{engine.EventUserMessage, "alice", "Refund order 1234 please"}}},
		{"s1", engine.StatusFailed, engine.OriginSlack, "triage", "U7", []msg{{engine.EventUserMessage, "U7", "The login page is broken"}, {engine.EventAgentMessage, "", "I filed a ticket about the café login"}}},
		{"s2", engine.StatusIdle, engine.OriginConsole, "default", "bob", []msg{{engine.EventUserMessage, "bob", "weekly digest"}, {engine.EventUserMessage, "carol", "also the REFUND queue"}}},
		{"s3", engine.StatusRunning, engine.OriginSchedule, "digest", "", []msg{{engine.EventUserMessage, "", "Summarise yesterday"}}},
		{"s4", engine.StatusIdle, engine.OriginAPI, "default", "alice", nil},
	}
	for i, f := range fixtures {
		s := Session(f.id, T0.Add(time.Duration(i)*time.Hour))
		s.Status, s.Origin, s.Agent, s.StartedBy = f.status, f.origin, f.agent, f.by
		CreateSession(t, st, s)
		var evs []engine.Event
		for j, m := range f.msgs {
			data, _ := json.Marshal(map[string]string{"text": m.text, "author": m.author})
			evs = append(evs, engine.Event{ID: EventID(f.id, j), Type: m.typ, Data: data})
		}
		if len(evs) > 0 {
			Commit(t, st, engine.Commit{SessionID: f.id, Now: s.CreatedAt, Events: evs})
		}
	}
}

func testListSessionsFilters(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	searchFixture(t, st)
	tests := []struct {
		name string
		q    store.SessionQuery
		want []string
	}{
		{"all newest first", store.SessionQuery{}, []string{"s4", "s3", "s2", "s1", "s0"}},
		{"status", store.SessionQuery{Status: engine.StatusIdle}, []string{"s4", "s2", "s0"}},
		{"origin", store.SessionQuery{Origin: engine.OriginAPI}, []string{"s4", "s0"}},
		{"agent", store.SessionQuery{Agent: "triage"}, []string{"s1"}},
		{"person started", store.SessionQuery{Person: "alice"}, []string{"s4", "s0"}},
		{"person wrote", store.SessionQuery{Person: "carol"}, []string{"s2"}},
		{"id", store.SessionQuery{ID: "s3"}, []string{"s3"}},
		{"id and person who wrote", store.SessionQuery{ID: "s2", Person: "carol"}, []string{"s2"}},
		{"id and person who did not", store.SessionQuery{ID: "s0", Person: "carol"}, nil},
		{"id and person who started", store.SessionQuery{ID: "s0", Person: "alice"}, []string{"s0"}},
		{"missing id", store.SessionQuery{ID: "nope"}, nil},
		{"since until", store.SessionQuery{Since: T0.Add(time.Hour), Until: T0.Add(3 * time.Hour)}, []string{"s2", "s1"}},
		{"word any case", store.SessionQuery{Text: "refund"}, []string{"s2", "s0"}},
		{"agent text", store.SessionQuery{Text: "Login"}, []string{"s1"}},
		{"accent folded", store.SessionQuery{Text: "cafe"}, nil},
		{"words across messages", store.SessionQuery{Text: "digest refund"}, []string{"s2"}},
		{"author word", store.SessionQuery{Text: "carol"}, []string{"s2"}},
		{"agent name", store.SessionQuery{Text: "triage"}, []string{"s1"}},
		{"number", store.SessionQuery{Text: "1234"}, []string{"s0"}},
		{"no match", store.SessionQuery{Text: "nothing-here-xyz"}, nil},
		{"only syntax", store.SessionQuery{Text: `"* OR NEAR( -`}, nil},
		{"sql quote", store.SessionQuery{Text: `refund' OR 1=1 --`}, nil},
		{"text and filter", store.SessionQuery{Text: "refund", Origin: engine.OriginAPI}, []string{"s0"}},
		{"whole words only", store.SessionQuery{Text: "refun"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := st.ListSessions(ctx, tt.q)
			if err != nil {
				t.Fatalf("ListSessions: %v", err)
			}
			if next != "" {
				t.Errorf("next = %q, want none (one page)", next)
			}
			if !slices.Equal(sessionIDs(got), tt.want) {
				t.Errorf("ListSessions(%+v) = %v, want %v", tt.q, sessionIDs(got), tt.want)
			}
		})
	}
	// "cafe" must not match "café" in one store and not the other: both
	// match whole words as written, so the accent matters in neither.
	got, _, err := st.ListSessions(ctx, store.SessionQuery{Text: "café"})
	if err != nil || !slices.Equal(sessionIDs(got), []string{"s1"}) {
		t.Errorf(`ListSessions(café) = %v, %v; want [s1]`, sessionIDs(got), err)
	}
}

func testListSessionsCursor(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	// Seven sessions, two sharing a creation time: the cursor orders by id
	// too, so neither is skipped or repeated.
	for i := range 7 {
		at := T0.Add(time.Duration(min(i, 5)) * time.Minute)
		CreateSession(t, st, Session(EventID("p", i), at))
	}
	var got []string
	cursor := ""
	for range 10 {
		page, next, err := st.ListSessions(ctx, store.SessionQuery{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatalf("ListSessions: %v", err)
		}
		if len(page) > 3 {
			t.Fatalf("page of %d, limit 3", len(page))
		}
		got = append(got, sessionIDs(page)...)
		if next == "" {
			break
		}
		// A session created meanwhile sorts first and does not shift the
		// pages that follow.
		if cursor == "" {
			CreateSession(t, st, Session("p-new", T0.Add(time.Hour)))
		}
		cursor = next
	}
	want := []string{"p-006", "p-005", "p-004", "p-003", "p-002", "p-001", "p-000"}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
	_, _, err := st.ListSessions(ctx, store.SessionQuery{Cursor: "not a cursor!"})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeInvalid {
		t.Errorf("bad cursor: err = %v, want an invalid_request engine error", err)
	}
}

func testUsageReport(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	searchFixture(t, st)
	turn := func(id string, at time.Time, in, out int64) {
		t.Helper()
		data, _ := json.Marshal(engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Rounds: 1,
			Usage: engine.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: 1}})
		Commit(t, st, engine.Commit{SessionID: id, Now: at, Events: []engine.Event{{ID: id + "-" + at.Format("150405.000"), Type: engine.EventTurnCompleted, Data: data}}})
	}
	day := time.Date(2025, 3, 14, 0, 0, 0, 0, time.UTC)
	turn("s0", day.Add(10*time.Hour), 100, 10)
	turn("s0", day.Add(11*time.Hour), 200, 20)
	turn("s1", day.Add(12*time.Hour), 50, 5)
	turn("s0", day.Add(30*time.Hour), 7, 1)   // the next day
	turn("s4", day.Add(-time.Hour), 1000, 99) // before the window
	got, err := st.Usage(ctx, day, day.Add(48*time.Hour))
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	want := []store.UsageRow{
		{Day: "2025-03-14", Agent: "default", Person: "alice", Origin: engine.OriginAPI, Turns: 2, Usage: engine.Usage{InputTokens: 300, OutputTokens: 30, CacheReadTokens: 2}},
		{Day: "2025-03-14", Agent: "triage", Person: "U7", Origin: engine.OriginSlack, Turns: 1, Usage: engine.Usage{InputTokens: 50, OutputTokens: 5, CacheReadTokens: 1}},
		{Day: "2025-03-15", Agent: "default", Person: "alice", Origin: engine.OriginAPI, Turns: 1, Usage: engine.Usage{InputTokens: 7, OutputTokens: 1, CacheReadTokens: 1}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Usage =\n%+v\nwant\n%+v", got, want)
	}
}
