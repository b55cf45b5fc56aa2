package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func testCommitAssignsConsecutiveSeqs(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	CreateSession(t, st, Session("s2", T0)) // seqs are per session

	now := T0.Add(time.Second)
	first := Commit(t, st, engine.Commit{SessionID: "s1", Now: now, Events: []engine.Event{
		userMessage("e1", "hello"),
		{ID: "e2", Type: engine.EventTurnStarted, TurnID: "t1"},
	}})
	if got := seqs(first.Events); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("first commit seqs = %v, want [1 2]", got)
	}
	if first.Session.LastSeq != 2 || !first.Session.UpdatedAt.Equal(now) {
		t.Errorf("session after first commit: LastSeq %d UpdatedAt %v, want 2 %v",
			first.Session.LastSeq, first.Session.UpdatedAt, now)
	}
	Commit(t, st, engine.Commit{SessionID: "s2", Events: []engine.Event{userMessage("x1", "other")}})
	second := Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{
		{ID: "e3", Type: engine.EventAgentMessage, TurnID: "t1", Data: json.RawMessage(`{"text":"hi"}`)},
	}})
	if got := seqs(second.Events); !slices.Equal(got, []int64{3}) {
		t.Errorf("second commit seqs = %v, want [3]", got)
	}

	evs, err := st.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if got := ids(evs); !slices.Equal(got, []string{"e1", "e2", "e3"}) {
		t.Errorf("Events ids = %v, want [e1 e2 e3]", got)
	}
	// What Commit returned is what a read returns.
	if !reflect.DeepEqual(evs[:2], first.Events) {
		t.Errorf("stored events\n%+v\ndiffer from Commit's\n%+v", evs[:2], first.Events)
	}
	got, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if !reflect.DeepEqual(got, second.Session) {
		t.Errorf("stored session\n%+v\ndiffers from Commit's\n%+v", got, second.Session)
	}
}

func testCommitEventDefaults(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))

	stamped := time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("X", -7200))
	res := Commit(t, st, engine.Commit{SessionID: "s1", Now: T0, Events: []engine.Event{
		{ID: "e1", Type: engine.EventSessionStatus},                    // no data, no time
		{ID: "e2", Type: engine.EventToolProgress, CreatedAt: stamped}, // caller's time kept
		{ID: "e3", Type: engine.EventToolResult, Data: json.RawMessage(" [1, 2 ,3] ")},
	}})
	evs, err := st.Events(context.Background(), "s1", 0, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if !reflect.DeepEqual(evs, res.Events) {
		t.Errorf("stored events\n%+v\ndiffer from Commit's\n%+v", evs, res.Events)
	}
	if string(evs[0].Data) != "{}" || evs[0].CreatedAt != T0.UTC() {
		t.Errorf("event without data/time: Data %s CreatedAt %v, want {} %v", evs[0].Data, evs[0].CreatedAt, T0.UTC())
	}
	if evs[1].CreatedAt != stamped.UTC() {
		t.Errorf("stamped event CreatedAt = %v, want %v", evs[1].CreatedAt, stamped.UTC())
	}
	if string(evs[2].Data) != " [1, 2 ,3] " {
		t.Errorf("raw data = %q, want the bytes unchanged", evs[2].Data)
	}
	if evs[0].SessionID != "s1" {
		t.Errorf("SessionID = %q, want s1", evs[0].SessionID)
	}
}

func testCommitUpdateChangesSession(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	orig := CreateSession(t, st, Session("s1", T0))

	question := json.RawMessage(`{"id":"q1","text":"Pick one","options":[{"label":"A","value":"a"}]}`)
	result := json.RawMessage(`{"turn_id":"t1","data":{"n":1}}`)
	res := Commit(t, st, engine.Commit{
		SessionID: "s1",
		Now:       T0.Add(time.Minute),
		Update: func(s *engine.Session) error {
			s.Status = engine.StatusAwaitingInput
			s.InputCursor = 1
			s.Checkpoint = 2
			s.Question = question
			s.Result = result
			s.Agent = "hijacked" // not a mutable field: ignored
			s.LastSeq = 1000     // the store owns the sequence
			return nil
		},
		Events: []engine.Event{userMessage("e1", "hi"), {ID: "e2", Type: engine.EventTurnCompleted}},
	})

	want := orig
	want.Status = engine.StatusAwaitingInput
	want.InputCursor = 1
	want.Checkpoint = 2
	want.Question = question
	want.Result = result
	want.LastSeq = 2
	want.UpdatedAt = T0.Add(time.Minute).UTC()
	if !reflect.DeepEqual(res.Session, want) {
		t.Errorf("Commit session\n%+v\nwant\n%+v", res.Session, want)
	}
	got, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored session\n%+v\nwant\n%+v", got, want)
	}

	// A cleared question reads back as nil.
	res = Commit(t, st, engine.Commit{SessionID: "s1", Update: func(s *engine.Session) error {
		if !reflect.DeepEqual(s.Question, question) {
			t.Errorf("Update saw Question %s, want %s", s.Question, question)
		}
		s.Question = nil
		s.Status = engine.StatusIdle
		return nil
	}})
	got, err = st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if got.Question != nil || res.Session.Question != nil || got.Status != engine.StatusIdle {
		t.Errorf("after clearing: stored Question %s, returned %s, Status %s", got.Question, res.Session.Question, got.Status)
	}
}

// busyError is a caller-defined error type: Commit must return it unchanged
// so errors.As still finds it.
type busyError struct{ status engine.Status }

func (e *busyError) Error() string { return "session is " + string(e.status) }

func testCommitUpdateErrorAborts(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{userMessage("e1", "hi")}})

	tests := []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"sentinel", engine.Errorf(engine.CodeConflict, "resume the interrupted session before sending input"),
			func(err error) bool { return errors.Is(err, engine.ErrConflict) }},
		{"custom type", &busyError{engine.StatusRunning},
			func(err error) bool {
				var be *busyError
				return errors.As(err, &be) && be.status == engine.StatusRunning
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.Commit(ctx, engine.Commit{
				SessionID: "s1",
				Now:       T0.Add(time.Hour),
				InputKey:  "k-" + tt.name,
				Result:    &engine.ResultRecord{TurnID: "t1", ReportedAt: T0, Data: []byte(`{}`)},
				Update: func(s *engine.Session) error {
					s.Status = engine.StatusFailed
					return tt.err
				},
				Events: []engine.Event{userMessage("never-"+tt.name, "x")},
			})
			if err != tt.err || !tt.check(err) {
				t.Fatalf("Commit err = %#v, want %#v unchanged", err, tt.err)
			}
		})
	}

	s, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if s.LastSeq != 1 || s.Status != engine.StatusIdle || !s.UpdatedAt.Equal(T0) {
		t.Errorf("session after aborted commits: LastSeq %d Status %s UpdatedAt %v; want 1 idle %v",
			s.LastSeq, s.Status, s.UpdatedAt, T0)
	}
	evs, _ := st.Events(ctx, "s1", 0, 0)
	if got := ids(evs); !slices.Equal(got, []string{"e1"}) {
		t.Errorf("events after aborted commits = %v, want [e1]", got)
	}
	if rs, _ := st.Results(ctx, "s1"); len(rs) != 0 {
		t.Errorf("results after aborted commits = %d, want 0", len(rs))
	}
	// The aborted commits' input keys were not recorded.
	res := Commit(t, st, engine.Commit{SessionID: "s1", InputKey: "k-sentinel", Events: []engine.Event{userMessage("e2", "retry")}})
	if res.Duplicate || res.Events[0].Seq != 2 {
		t.Errorf("retry after abort: Duplicate %v seq %d, want false 2", res.Duplicate, res.Events[0].Seq)
	}
}

// testCommitUpdatePanicWritesNothing: Update is caller code and may panic;
// the panic reaches the caller, the transaction is undone and the store
// keeps taking writes (an open transaction left behind would block them).
func testCommitUpdatePanicWritesNothing(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))

	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic in Update did not propagate")
			}
		}()
		st.Commit(context.Background(), engine.Commit{SessionID: "s1", Now: T0,
			Update: func(*engine.Session) error { panic("boom") },
			Events: []engine.Event{userMessage("lost", "x")}})
	}()

	// Writes go through again (within the timeout) and nothing was written.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: T0, Events: []engine.Event{userMessage("e1", "x")}})
	if err != nil {
		t.Fatalf("Commit after a panicking Update: %v", err)
	}
	if res.Events[0].Seq != 1 {
		t.Errorf("seq = %d, want 1", res.Events[0].Seq)
	}
}

func testCommitPendingInput(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	for _, id := range []string{"quiet", "queued", "taken"} {
		CreateSession(t, st, Session(id, T0))
	}
	pending := func() []string {
		t.Helper()
		ss, err := st.Sessions(ctx, engine.SessionFilter{PendingInput: true})
		if err != nil {
			t.Fatalf("Sessions: %v", err)
		}
		out := sessionIDs(ss)
		slices.Sort(out)
		return out
	}

	Commit(t, st, engine.Commit{SessionID: "quiet", Events: []engine.Event{{ID: "q1", Type: engine.EventAgentMessage}}})
	Commit(t, st, engine.Commit{SessionID: "queued", Events: []engine.Event{userMessage("u1", "a"), userMessage("u2", "b")}})
	Commit(t, st, engine.Commit{SessionID: "taken", Events: []engine.Event{userMessage("t1", "a")}})
	if got := pending(); !slices.Equal(got, []string{"queued", "taken"}) {
		t.Fatalf("pending = %v, want [queued taken]", got)
	}

	// A turn takes the input: the cursor reaches the newest user.message.
	Commit(t, st, engine.Commit{
		SessionID: "taken",
		Update:    func(s *engine.Session) error { s.InputCursor = 1; s.Status = engine.StatusRunning; return nil },
		Events:    []engine.Event{{ID: "t2", Type: engine.EventTurnStarted}},
	})
	// Taking only part of the queue leaves the session pending.
	Commit(t, st, engine.Commit{
		SessionID: "queued",
		Update:    func(s *engine.Session) error { s.InputCursor = 1; return nil },
	})
	if got := pending(); !slices.Equal(got, []string{"queued"}) {
		t.Errorf("pending = %v, want [queued]", got)
	}

	// New input while running is pending again; the filter combines.
	Commit(t, st, engine.Commit{SessionID: "taken", Events: []engine.Event{userMessage("t3", "more")}})
	ss, err := st.Sessions(ctx, engine.SessionFilter{PendingInput: true, Statuses: []engine.Status{engine.StatusRunning}})
	if err != nil {
		t.Fatalf("Sessions: %v", err)
	}
	if got := sessionIDs(ss); !slices.Equal(got, []string{"taken"}) {
		t.Errorf("pending and running = %v, want [taken]", got)
	}
}

func testCommitIdempotentInput(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	CreateSession(t, st, Session("s2", T0))

	first := Commit(t, st, engine.Commit{SessionID: "s1", InputKey: "msg-1",
		Events: []engine.Event{userMessage("e1", "hi"), {ID: "e2", Type: engine.EventSessionStatus}}})
	if first.Duplicate {
		t.Fatal("first commit: Duplicate = true")
	}
	dup, err := st.Commit(ctx, engine.Commit{SessionID: "s1", InputKey: "msg-1", Now: T0.Add(time.Hour),
		Update: func(*engine.Session) error { t.Error("Update ran on a duplicate"); return nil },
		Events: []engine.Event{userMessage("e9", "hi again")}})
	if err != nil {
		t.Fatalf("duplicate Commit: %v", err)
	}
	if !dup.Duplicate {
		t.Error("duplicate commit: Duplicate = false")
	}
	if !reflect.DeepEqual(dup.Events, first.Events[:1]) {
		t.Errorf("duplicate returned %+v, want the original first event %+v", dup.Events, first.Events[:1])
	}
	if !reflect.DeepEqual(dup.Session, first.Session) {
		t.Errorf("duplicate returned session %+v, want unchanged %+v", dup.Session, first.Session)
	}
	// Keys are per session.
	other := Commit(t, st, engine.Commit{SessionID: "s2", InputKey: "msg-1", Events: []engine.Event{userMessage("x1", "hi")}})
	if other.Duplicate {
		t.Error("same key on another session: Duplicate = true")
	}
	if evs, _ := st.Events(ctx, "s1", 0, 0); len(evs) != 2 {
		t.Errorf("s1 has %d events, want 2", len(evs))
	}
}

func testCommitIdempotentInputConcurrent(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	st := stores[0]
	CreateSession(t, st, Session("s1", T0))

	const n = 20
	results := make([]engine.CommitResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = stores[i%2].Commit(ctx, engine.Commit{
				SessionID: "s1",
				Now:       T0,
				InputKey:  "same",
				Events:    []engine.Event{userMessage(EventID("e", i), "hi")},
			})
		}()
	}
	wg.Wait()

	var originals, dups int
	eventIDs := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Commit %d: %v", i, errs[i])
		}
		if results[i].Duplicate {
			dups++
		} else {
			originals++
		}
		if len(results[i].Events) != 1 {
			t.Fatalf("Commit %d returned %d events, want 1", i, len(results[i].Events))
		}
		eventIDs[results[i].Events[0].ID] = true
	}
	if originals != 1 || dups != n-1 {
		t.Errorf("originals %d duplicates %d, want 1 and %d", originals, dups, n-1)
	}
	if len(eventIDs) != 1 {
		t.Errorf("commits returned event ids %v, want one", eventIDs)
	}
	evs, err := st.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if len(evs) != 1 || !eventIDs[evs[0].ID] || evs[0].Seq != 1 {
		t.Errorf("stored events = %+v, want one with seq 1 and the returned id", evs)
	}
}

func testCommitRejects(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{userMessage("e1", "hi")}})

	tests := []struct {
		name string
		c    engine.Commit
		want error
	}{
		{"zero Now", engine.Commit{SessionID: "s1", Events: []engine.Event{userMessage("e2", "x")}}, engine.ErrInvariant},
		{"empty session id", engine.Commit{Now: T0}, engine.ErrInvariant},
		{"event without id", engine.Commit{SessionID: "s1", Now: T0, Events: []engine.Event{{Type: engine.EventAgentMessage}}}, engine.ErrInvariant},
		{"invalid JSON", engine.Commit{SessionID: "s1", Now: T0, Events: []engine.Event{{ID: "e2", Type: "x", Data: json.RawMessage(`{`)}}}, engine.ErrInvariant},
		// e2 is fine, e1 is taken: the whole commit is rolled back.
		{"reused event id", engine.Commit{SessionID: "s1", Now: T0, Events: []engine.Event{userMessage("e2", "x"), userMessage("e1", "x")}}, engine.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.Commit(ctx, tt.c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Commit err = %v, want %v", err, tt.want)
			}
		})
	}
	s, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if s.LastSeq != 1 {
		t.Errorf("LastSeq = %d after rejected commits, want 1", s.LastSeq)
	}
}
