package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// testListSessions: every filter, the order (newest activity first, then
// id) and paging with the cursor, which sees each session once.
func testListSessions(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	type row struct {
		id, agent, person string
		origin            engine.Origin
		status            engine.Status
		at                time.Duration
	}
	rows := []row{
		{"s1", "default", "U1", engine.OriginAPI, engine.StatusIdle, 1 * time.Minute},
		{"s2", "triage", "U2", engine.OriginSlack, engine.StatusRunning, 2 * time.Minute},
		{"s3", "default", "U2", engine.OriginLinear, engine.StatusFailed, 3 * time.Minute},
		{"s4", "triage", "U1", engine.OriginSlack, engine.StatusIdle, 3 * time.Minute}, // same activity as s3
		{"s5", "default", "U1", engine.OriginAPI, engine.StatusIdle, 5 * time.Minute},
	}
	for _, r := range rows {
		s := Session(r.id, T0)
		s.Agent, s.StartedBy, s.Origin, s.Status = r.agent, r.person, r.origin, r.status
		CreateSession(t, st, s)
		// Activity is the last commit's time.
		Commit(t, st, engine.Commit{SessionID: r.id, Now: T0.Add(r.at)})
	}
	ids := func(ss []engine.Session) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = s.ID
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    store.SessionQuery
		want []string
	}{
		{"all", store.SessionQuery{}, []string{"s5", "s4", "s3", "s2", "s1"}},
		{"status", store.SessionQuery{Status: engine.StatusIdle}, []string{"s5", "s4", "s1"}},
		{"origin", store.SessionQuery{Origin: engine.OriginSlack}, []string{"s4", "s2"}},
		{"agent", store.SessionQuery{Agent: "default"}, []string{"s5", "s3", "s1"}},
		{"person", store.SessionQuery{Person: "U2"}, []string{"s3", "s2"}},
		{"since until", store.SessionQuery{Since: T0.Add(2 * time.Minute), Until: T0.Add(5 * time.Minute)}, []string{"s4", "s3", "s2"}},
		{"combined", store.SessionQuery{Status: engine.StatusIdle, Person: "U1", Agent: "triage"}, []string{"s4"}},
		{"none", store.SessionQuery{Agent: "nobody"}, nil},
	} {
		page, err := st.ListSessions(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ids(page.Sessions); !equalStrings(got, tc.want) || page.Next != "" {
			t.Errorf("%s: got %v next %q, want %v and no next page", tc.name, got, page.Next, tc.want)
		}
	}

	// Two at a time: every session once, in order, then no cursor.
	var got []string
	q := store.SessionQuery{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		page, err := st.ListSessions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page.Sessions)...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if want := []string{"s5", "s4", "s3", "s2", "s1"}; !equalStrings(got, want) {
		t.Errorf("paged: %v, want %v", got, want)
	}
	page, err := st.ListSessions(ctx, store.SessionQuery{Limit: 1})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "s5" || page.Next == "" {
		t.Fatalf("limit 1: %v %v", page, err)
	}

	for name, q := range map[string]store.SessionQuery{
		"text":     {Text: "login"},
		"cursor":   {Cursor: "not-a-cursor"},
		"negative": {Limit: -1},
	} {
		if _, err := st.ListSessions(ctx, q); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: err = %v, want invalid_request", name, err)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// testCommitKeepsUsage: the session's usage is the running total of its
// turn.completed events and its compactions outside a turn, kept by each
// commit and read back with the session.
func testCommitKeepsUsage(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))
	ev := func(id, turn string, p engine.Payload) engine.Event {
		e, err := engine.NewEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		e.ID, e.TurnID = id, turn
		return e
	}
	u := func(in, out, read, write int64) engine.Usage {
		return engine.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: read, CacheWriteTokens: write}
	}
	Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{
		ev("e1", "t1", engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Usage: u(100, 10, 50, 5)}),
		// Inside a turn: its usage is already in the turn's.
		ev("e2", "t2", engine.ContextCompacted{Reason: engine.CompactBudget, Usage: u(1000, 1000, 0, 0)}),
	}})
	Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{
		ev("e3", "", engine.ContextCompacted{Reason: engine.CompactAPI, Summary: "s", Usage: u(20, 2, 0, 0)}),
		ev("e4", "t2", engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Usage: u(7, 1, 0, 3)}),
	}})
	res := Commit(t, st, engine.Commit{SessionID: "s1"})
	want := u(127, 13, 50, 8)
	if res.Session.UsageTotal != want {
		t.Errorf("commit result usage %+v, want %+v", res.Session.UsageTotal, want)
	}
	got, err := st.Session(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.UsageTotal != want {
		t.Errorf("read usage %+v, want %+v", got.UsageTotal, want)
	}
}

// testCommitContextSeq: Update moves the context checkpoint; a commit
// that does not touch it keeps it.
func testCommitContextSeq(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))
	Commit(t, st, engine.Commit{SessionID: "s1", Update: func(s *engine.Session) error {
		s.ContextSeq = 42
		return nil
	}})
	Commit(t, st, engine.Commit{SessionID: "s1", Update: func(s *engine.Session) error {
		s.Status = engine.StatusRunning
		return nil
	}})
	got, err := st.Session(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ContextSeq != 42 {
		t.Errorf("ContextSeq = %d, want 42", got.ContextSeq)
	}
}
