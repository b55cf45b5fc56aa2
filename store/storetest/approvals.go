package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// addApproval commits a as a NewApproval of sessionID together with its
// approval.requested event.
func addApproval(tb testing.TB, st engine.Store, sessionID string, a engine.Approval) {
	tb.Helper()
	Commit(tb, st, engine.Commit{SessionID: sessionID, NewApproval: &a,
		Events: []engine.Event{{ID: "req-" + a.ID, Type: engine.EventApprovalRequested, TurnID: a.TurnID}}})
}

// inUTC is a as the store returns it: every time in UTC.
func inUTC(a engine.Approval) engine.Approval {
	a.DecidedAt = a.DecidedAt.UTC()
	a.CreatedAt = a.CreatedAt.UTC()
	a.ExpiresAt = a.ExpiresAt.UTC()
	a.UpdatedAt = a.UpdatedAt.UTC()
	return a
}

func getApproval(tb testing.TB, st engine.Store, id string) engine.Approval {
	tb.Helper()
	a, err := st.Approval(context.Background(), id)
	if err != nil {
		tb.Fatalf("Approval(%s): %v", id, err)
	}
	return a
}

func approvalIDs(as []engine.Approval) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func testApprovalRoundTrip(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))

	pending := Approval("a1", T0)
	pending.SessionID = "ignored" // Commit.SessionID wins
	addApproval(t, st, "s1", pending)
	want := inUTC(pending)
	want.SessionID = "s1"
	if got := getApproval(t, st, "a1"); !reflect.DeepEqual(got, want) {
		t.Errorf("pending approval\n got %+v\nwant %+v", got, want)
	}

	// Every optional field set, in another zone, with an empty fact list.
	zone := time.FixedZone("PST", -8*3600)
	done := Approval("a2", T0.In(zone))
	done.Card = tools.Card{Title: "Empty", Facts: []tools.Fact{}}
	done.Status = engine.ApprovalApplied
	done.DecisionID = "dec-1"
	done.DecidedBy = "U999"
	done.DecidedAt = T0.Add(time.Minute).In(zone)
	done.Output = json.RawMessage(` {"issue": "ENG-42"} `)
	done.Error = "first attempt timed out"
	done.Attempts = 2
	done.UpdatedAt = T0.Add(2 * time.Minute)
	addApproval(t, st, "s1", done)
	want = inUTC(done)
	want.SessionID = "s1"
	if got := getApproval(t, st, "a2"); !reflect.DeepEqual(got, want) {
		t.Errorf("applied approval\n got %+v\nwant %+v", got, want)
	}
}

func testCommitNewApprovalDefaults(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))

	now := T0.Add(time.Second)
	a := Approval("a1", time.Time{})
	a.Status = ""
	a.UpdatedAt = time.Time{}
	a.Input = nil
	a.Card = tools.Card{}
	Commit(t, st, engine.Commit{SessionID: "s1", Now: now, NewApproval: &a})

	got := getApproval(t, st, "a1")
	if !got.CreatedAt.Equal(now) || !got.UpdatedAt.Equal(now) {
		t.Errorf("CreatedAt %v UpdatedAt %v, want both %v", got.CreatedAt, got.UpdatedAt, now)
	}
	if got.Status != engine.ApprovalPending || string(got.Input) != "{}" || got.Output != nil {
		t.Errorf("Status %q Input %s Output %s, want pending {} nil", got.Status, got.Input, got.Output)
	}
	if got.Card.Title != "" || got.Card.Facts != nil {
		t.Errorf("Card = %+v, want zero", got.Card)
	}
}

func testCommitNewApprovalAtomic(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))

	a := Approval("a1", T0)
	res := Commit(t, st, engine.Commit{SessionID: "s1", NewApproval: &a,
		Update: func(s *engine.Session) error { s.Status = engine.StatusAwaitingInput; return nil },
		Events: []engine.Event{{ID: "e1", Type: engine.EventToolCall}, {ID: "e2", Type: engine.EventApprovalRequested}}})
	if got := seqs(res.Events); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("seqs = %v, want [1 2]", got)
	}
	getApproval(t, st, "a1")

	errBusy := errors.New("busy")
	tests := []struct {
		name   string
		update func(*engine.Session) error
		a      engine.Approval
		want   error
	}{
		{"update error", func(*engine.Session) error { return errBusy }, Approval("a2", T0), errBusy},
		{"duplicate id", nil, Approval("a1", T0.Add(time.Hour)), engine.ErrConflict},
		{"no id", nil, Approval("", T0), engine.ErrInvariant},
		{"input not JSON", nil, func() engine.Approval {
			a := Approval("a3", T0)
			a.Input = json.RawMessage(`{"x":`)
			return a
		}(), engine.ErrInvariant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			_, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: T0.Add(time.Hour), NewApproval: &a,
				Update: tt.update,
				Events: []engine.Event{{ID: "never-" + tt.name, Type: engine.EventApprovalRequested}}})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Commit err = %v, want %v", err, tt.want)
			}
		})
	}

	as, err := st.Approvals(ctx, engine.ApprovalFilter{})
	if err != nil {
		t.Fatalf("Approvals: %v", err)
	}
	if got := approvalIDs(as); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("approvals after failed commits = %v, want [a1]", got)
	}
	if !as[0].CreatedAt.Equal(T0) {
		t.Errorf("a1 CreatedAt = %v, want the original %v", as[0].CreatedAt, T0)
	}
	evs, _ := st.Events(ctx, "s1", 0, 0)
	if got := ids(evs); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Errorf("events after failed commits = %v, want [e1 e2]", got)
	}
	if s, _ := st.Session(ctx, "s1"); s.LastSeq != 2 || s.Status != engine.StatusAwaitingInput {
		t.Errorf("session after failed commits: LastSeq %d Status %s, want 2 awaiting_input", s.LastSeq, s.Status)
	}
}

func testApprovalsFilter(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	CreateSession(t, st, Session("s2", T0))

	// Created in order a..f a minute apart, except e and f share a time (id
	// breaks the tie); each expires ten minutes after creation.
	type row struct {
		id, session string
		status      engine.ApprovalStatus
		minute      int
	}
	for _, r := range []row{
		{"a", "s1", engine.ApprovalApplied, 0},
		{"b", "s1", engine.ApprovalPending, 1},
		{"c", "s2", engine.ApprovalPending, 2},
		{"d", "s2", engine.ApprovalDenied, 3},
		{"e", "s1", engine.ApprovalPending, 4},
		{"f", "s2", engine.ApprovalApplying, 4},
	} {
		a := Approval(r.id, T0.Add(time.Duration(r.minute)*time.Minute))
		a.ExpiresAt = a.CreatedAt.Add(10 * time.Minute)
		a.Status = r.status
		addApproval(t, st, r.session, a)
	}

	tests := []struct {
		name string
		f    engine.ApprovalFilter
		want []string
	}{
		{"all newest first", engine.ApprovalFilter{}, []string{"f", "e", "d", "c", "b", "a"}},
		{"one status", engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}}, []string{"e", "c", "b"}},
		{"two statuses", engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalApplied, engine.ApprovalApplying}}, []string{"f", "a"}},
		{"session", engine.ApprovalFilter{SessionID: "s2"}, []string{"f", "d", "c"}},
		{"unknown session", engine.ApprovalFilter{SessionID: "nope"}, nil},
		// b expires at minute 11, c at 12: "before 12" is strict.
		{"expires before", engine.ApprovalFilter{ExpiresBefore: T0.Add(12 * time.Minute)}, []string{"b", "a"}},
		{"pending sweep", engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending},
			ExpiresBefore: T0.Add(12*time.Minute + time.Nanosecond)}, []string{"c", "b"}},
		{"expires before, other zone", engine.ApprovalFilter{ExpiresBefore: T0.Add(12 * time.Minute).In(time.FixedZone("X", 5*3600))}, []string{"b", "a"}},
		{"limit", engine.ApprovalFilter{Limit: 2}, []string{"f", "e"}},
		{"combined", engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}, SessionID: "s1", Limit: 1}, []string{"e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as, err := st.Approvals(ctx, tt.f)
			if err != nil {
				t.Fatalf("Approvals: %v", err)
			}
			if got := approvalIDs(as); !slices.Equal(got, tt.want) {
				t.Errorf("Approvals = %v, want %v", got, tt.want)
			}
		})
	}

	// Listed approvals are whole: the same as a single read.
	as, _ := st.Approvals(ctx, engine.ApprovalFilter{SessionID: "s1", Limit: 1})
	if one := getApproval(t, st, "e"); len(as) != 1 || !reflect.DeepEqual(as[0], one) {
		t.Errorf("listed %+v, want %+v", as, one)
	}
}
