package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func testEventsAfterLimit(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	CreateSession(t, st, Session("empty", T0))
	for i := range 5 {
		Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{userMessage(EventID("e", i+1), "x")}})
	}

	tests := []struct {
		name  string
		after int64
		limit int
		want  []int64
	}{
		{"all", 0, 0, []int64{1, 2, 3, 4, 5}},
		{"negative limit is all", 0, -1, []int64{1, 2, 3, 4, 5}},
		{"after", 3, 0, []int64{4, 5}},
		{"limit", 0, 2, []int64{1, 2}},
		{"after and limit", 1, 3, []int64{2, 3, 4}},
		{"after the end", 5, 0, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := st.Events(ctx, "s1", tt.after, tt.limit)
			if err != nil {
				t.Fatalf("Events: %v", err)
			}
			if got := seqs(evs); !slices.Equal(got, tt.want) {
				t.Errorf("Events(after %d, limit %d) seqs = %v, want %v", tt.after, tt.limit, got, tt.want)
			}
		})
	}

	evs, err := st.Events(ctx, "empty", 0, 0)
	if err != nil || len(evs) != 0 {
		t.Errorf("Events of a session without events = %v, %v; want none and no error", evs, err)
	}
}

func testResultsHistory(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	CreateSession(t, st, Session("s2", T0))

	if rs, err := st.Results(ctx, "s1"); err != nil || len(rs) != 0 {
		t.Fatalf("Results before any commit = %v, %v; want none and no error", rs, err)
	}

	// Reported times go backwards on purpose: the order is commit order.
	want := []engine.ResultRecord{
		{TurnID: "t1", CallID: "c1", ReportedAt: T0.Add(time.Minute).UTC(), Data: []byte(`{"n":1}`)},
		{TurnID: "t2", CallID: "c2", ReportedAt: T0.UTC(), Data: []byte(`{"n": 2}`)},
		{TurnID: "t2", CallID: "c3", ReportedAt: T0.Add(time.Hour).UTC(), Data: []byte(`{}`)},
	}
	for i, r := range want {
		in := r
		if i == 2 {
			in.Data = nil // absent data is stored as {}
		}
		Commit(t, st, engine.Commit{SessionID: "s1", Result: &in,
			Events: []engine.Event{{ID: EventID("r", i), Type: engine.EventResultCommitted}}})
	}
	Commit(t, st, engine.Commit{SessionID: "s2", Result: &engine.ResultRecord{TurnID: "x", ReportedAt: T0, Data: []byte(`{}`)}})

	got, err := st.Results(ctx, "s1")
	if err != nil {
		t.Fatalf("Results: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Results returned %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].TurnID != want[i].TurnID || got[i].CallID != want[i].CallID ||
			got[i].ReportedAt != want[i].ReportedAt || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("Results[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
