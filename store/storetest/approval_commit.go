package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// errDecided is what a deciding Update returns when someone was first.
var errDecided = errors.New("approval already decided")

// decide is the Update the engine runs when a person approves: it only
// succeeds on a pending approval.
func decide(by string, at time.Time) func(*engine.Approval) error {
	return func(a *engine.Approval) error {
		if a.Status != engine.ApprovalPending {
			return errDecided
		}
		a.Status = engine.ApprovalApproved
		a.DecisionID = "dec-" + by
		a.DecidedBy = by
		a.DecidedAt = at
		return nil
	}
}

func testCommitApproval(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{userMessage("e1", "file it")}})
	addApproval(t, st, "s1", Approval("a1", T0)) // seq 2
	before := getApproval(t, st, "a1")

	now := T0.Add(time.Minute)
	decidedAt := now.In(time.FixedZone("PST", -8*3600))
	got, evs, err := st.CommitApproval(ctx, engine.ApprovalCommit{
		ID:  "a1",
		Now: now,
		Update: func(a *engine.Approval) error {
			if err := decide("U999", decidedAt)(a); err != nil {
				return err
			}
			a.DecidedSurface = "api"
			a.Output = json.RawMessage(`{"issue":"ENG-42"}`)
			a.Error = "retried once"
			a.Attempts = 1
			// Not the caller's to change: ignored.
			a.SessionID, a.Tool, a.Input, a.RequestedBy = "s2", "other", json.RawMessage(`{}`), "U000"
			a.Card.Title, a.CreatedAt, a.ExpiresAt, a.UpdatedAt = "changed", now, now, now.Add(time.Hour)
			return nil
		},
		Events: []engine.Event{
			{ID: "d1", Type: engine.EventApprovalDecided, Data: json.RawMessage(`{"by":"U999"}`)},
			{ID: "d2", Type: engine.EventApprovalApplied},
		},
	})
	if err != nil {
		t.Fatalf("CommitApproval: %v", err)
	}

	want := before
	want.Status = engine.ApprovalApproved
	want.DecisionID, want.DecidedBy, want.DecidedAt, want.DecidedSurface = "dec-U999", "U999", now.UTC(), "api"
	want.Output, want.Error, want.Attempts = json.RawMessage(`{"issue":"ENG-42"}`), "retried once", 1
	want.UpdatedAt = now.UTC()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CommitApproval returned\n %+v\nwant %+v", got, want)
	}
	if stored := getApproval(t, st, "a1"); !reflect.DeepEqual(stored, want) {
		t.Errorf("stored approval\n %+v\nwant %+v", stored, want)
	}

	// Events continue the session's log and are what a read returns.
	if s := seqs(evs); !slices.Equal(s, []int64{3, 4}) {
		t.Errorf("CommitApproval seqs = %v, want [3 4]", s)
	}
	stored, err := st.Events(ctx, "s1", 2, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if !reflect.DeepEqual(stored, evs) {
		t.Errorf("stored events\n%+v\ndiffer from CommitApproval's\n%+v", stored, evs)
	}
	if evs[1].CreatedAt != now.UTC() || string(evs[1].Data) != "{}" || evs[0].SessionID != "s1" {
		t.Errorf("event defaults: %+v", evs[1])
	}
	s, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if s.LastSeq != 4 || !s.UpdatedAt.Equal(now) || s.Status != engine.StatusIdle {
		t.Errorf("session: LastSeq %d UpdatedAt %v Status %s, want 4 %v idle", s.LastSeq, s.UpdatedAt, s.Status, now)
	}
	// And Commit continues after them.
	res := Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{{ID: "e5", Type: engine.EventToolResult}}})
	if res.Events[0].Seq != 5 {
		t.Errorf("next Commit seq = %d, want 5", res.Events[0].Seq)
	}

	// Without events the session is left alone.
	got, evs, err = st.CommitApproval(ctx, engine.ApprovalCommit{ID: "a1", Now: now.Add(time.Hour),
		Update: func(a *engine.Approval) error { a.Attempts++; return nil }})
	if err != nil || len(evs) != 0 || got.Attempts != 2 || !got.UpdatedAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("CommitApproval without events = %+v, %v, %v", got, evs, err)
	}
	if s2, _ := st.Session(ctx, "s1"); s2.LastSeq != 5 || !s2.UpdatedAt.Equal(T0) {
		t.Errorf("session after event-less CommitApproval: LastSeq %d UpdatedAt %v, want 5 %v", s2.LastSeq, s2.UpdatedAt, T0)
	}
}

func testCommitApprovalUpdateErrorAborts(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	addApproval(t, st, "s1", Approval("a1", T0))
	before := getApproval(t, st, "a1")

	for _, want := range []error{
		errDecided,
		engine.Errorf(engine.CodeConflict, "approval a1 was denied"),
		&busyError{engine.StatusRunning},
	} {
		_, evs, err := st.CommitApproval(ctx, engine.ApprovalCommit{ID: "a1", Now: T0.Add(time.Hour),
			Update: func(a *engine.Approval) error {
				a.Status = engine.ApprovalDenied
				a.Attempts = 7
				return want
			},
			Events: []engine.Event{{ID: "never", Type: engine.EventApprovalDecided}}})
		if err != want || evs != nil {
			t.Errorf("CommitApproval = %v, %#v; want nil events and %#v unchanged", evs, err, want)
		}
	}
	if got := getApproval(t, st, "a1"); !reflect.DeepEqual(got, before) {
		t.Errorf("approval after aborted commits\n %+v\nwant %+v", got, before)
	}
	if evs, _ := st.Events(ctx, "s1", 0, 0); len(evs) != 1 {
		t.Errorf("session has %d events, want only the request", len(evs))
	}
}

func testCommitApprovalRejects(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	addApproval(t, st, "s1", Approval("a1", T0)) // event req-a1
	before := getApproval(t, st, "a1")
	approve := decide("U1", T0)

	tests := []struct {
		name string
		c    engine.ApprovalCommit
		want error
	}{
		{"not found", engine.ApprovalCommit{ID: "nope", Now: T0, Update: approve}, engine.ErrNotFound},
		{"zero Now", engine.ApprovalCommit{ID: "a1", Update: approve}, engine.ErrInvariant},
		{"empty id", engine.ApprovalCommit{Now: T0, Update: approve}, engine.ErrInvariant},
		{"event without id", engine.ApprovalCommit{ID: "a1", Now: T0, Update: approve,
			Events: []engine.Event{{Type: engine.EventApprovalDecided}}}, engine.ErrInvariant},
		{"output not JSON", engine.ApprovalCommit{ID: "a1", Now: T0,
			Update: func(a *engine.Approval) error { a.Output = json.RawMessage("ENG-42"); return nil }}, engine.ErrInvariant},
		// The approval row is updated before the events go in: the
		// conflict rolls the update back.
		{"reused event id", engine.ApprovalCommit{ID: "a1", Now: T0, Update: approve,
			Events: []engine.Event{{ID: "req-a1", Type: engine.EventApprovalDecided}}}, engine.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := st.CommitApproval(ctx, tt.c); !errors.Is(err, tt.want) {
				t.Fatalf("CommitApproval err = %v, want %v", err, tt.want)
			}
		})
	}
	if got := getApproval(t, st, "a1"); !reflect.DeepEqual(got, before) {
		t.Errorf("approval after rejected commits\n %+v\nwant %+v", got, before)
	}

	_, err := st.Approval(ctx, "nope")
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeNotFound || ee.Message != "approval nope not found" {
		t.Errorf("Approval(nope) err = %#v, want not_found %q", err, "approval nope not found")
	}
}

// testCommitApprovalRace decides one approval from 50 goroutines over two
// handles on one database (as two processes would): exactly one Update must
// see it pending.
func testCommitApprovalRace(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	st := stores[0]
	CreateSession(t, st, Session("s1", T0))
	addApproval(t, st, "s1", Approval("a1", T0))

	const n = 50
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		errs    = make([]error, n)
		results = make([]engine.Approval, n)
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], _, errs[i] = stores[i%2].CommitApproval(ctx, engine.ApprovalCommit{
				ID:     "a1",
				Now:    T0.Add(time.Minute),
				Update: decide(fmt.Sprintf("U%02d", i), T0.Add(time.Minute)),
				Events: []engine.Event{{ID: EventID("decided", i), Type: engine.EventApprovalDecided}},
			})
		}()
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("CommitApproval %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case err != errDecided:
			t.Errorf("CommitApproval %d: %v, want errDecided or success", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no CommitApproval won")
	}
	got := getApproval(t, st, "a1")
	if !reflect.DeepEqual(got, results[winner]) || got.DecidedBy != fmt.Sprintf("U%02d", winner) {
		t.Errorf("stored approval %+v, want the winner's %+v", got, results[winner])
	}
	evs, err := st.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if want := []string{"req-a1", EventID("decided", winner)}; !slices.Equal(ids(evs), want) {
		t.Errorf("events = %v, want %v", ids(evs), want)
	}
	if s := seqs(evs); !slices.Equal(s, []int64{1, 2}) {
		t.Errorf("seqs = %v, want [1 2]", s)
	}
}
