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

func testCreateAndGetSession(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()

	in := engine.Session{
		ID:          "s1",
		Agent:       "triage",
		Origin:      engine.OriginSlack,
		ThreadKey:   "slack:T1:C1:1700000000.000100",
		Interactive: true,
		StartedBy:   "U42",
		StartedKey:  "relay",
		Status:      engine.StatusIdle,
		CreatedAt:   T0,
		UpdatedAt:   T0.Add(time.Nanosecond),
		LastSeq:     99, // ignored: a new session has no events
		InputCursor: 0,
		Checkpoint:  0,
		Question:    json.RawMessage(`{"id":"q1","text":"Which?"}`),
		Result:      json.RawMessage(`{"ok":true}`),
	}
	want := in
	want.CreatedAt = T0.UTC()
	want.UpdatedAt = T0.Add(time.Nanosecond).UTC()
	want.LastSeq = 0

	got, created, err := st.CreateSession(ctx, in, "")
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if !created {
		t.Error("created = false, want true")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CreateSession returned\n%+v\nwant\n%+v", got, want)
	}

	byID, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if !reflect.DeepEqual(byID, want) {
		t.Errorf("Session returned\n%+v\nwant\n%+v", byID, want)
	}
	byThread, err := st.SessionByThread(ctx, in.ThreadKey)
	if err != nil {
		t.Fatalf("SessionByThread: %v", err)
	}
	if !reflect.DeepEqual(byThread, want) {
		t.Errorf("SessionByThread returned\n%+v\nwant\n%+v", byThread, want)
	}
}

func testCreateSessionDefaults(t *testing.T, open func() store.Store) {
	st := open()
	in := Session("s1", T0)
	in.Status = ""
	in.UpdatedAt = time.Time{}
	got := CreateSession(t, st, in)
	if got.Status != engine.StatusIdle {
		t.Errorf("Status = %q, want idle", got.Status)
	}
	if !got.UpdatedAt.Equal(T0) {
		t.Errorf("UpdatedAt = %v, want CreatedAt %v", got.UpdatedAt, T0)
	}
	if got.Question != nil || got.Result != nil {
		t.Errorf("Question, Result = %s, %s; want nil", got.Question, got.Result)
	}
}

func testNotFound(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("exists", T0))

	calls := map[string]func() error{
		"Session": func() error { _, err := st.Session(ctx, "nope"); return err },
		"SessionByThread": func() error {
			_, err := st.SessionByThread(ctx, "slack:T:C:1")
			return err
		},
		"SessionByThread empty": func() error { _, err := st.SessionByThread(ctx, ""); return err },
		"Events":                func() error { _, err := st.Events(ctx, "nope", 0, 0); return err },
		"Results":               func() error { _, err := st.Results(ctx, "nope"); return err },
		"Commit": func() error {
			_, err := st.Commit(ctx, engine.Commit{SessionID: "nope", Now: T0, Events: []engine.Event{userMessage("e1", "hi")}})
			return err
		},
		"Approval": func() error { _, err := st.Approval(ctx, "nope"); return err },
		"CommitApproval": func() error {
			_, _, err := st.CommitApproval(ctx, engine.ApprovalCommit{ID: "nope", Now: T0,
				Update: func(*engine.Approval) error { return nil }})
			return err
		},
		"LastRun":   func() error { _, err := st.LastRun(ctx, "never"); return err },
		"UpdateRun": func() error { return st.UpdateRun(ctx, testRun("never", T0)) },
		"FinishRun": func() error { _, err := st.FinishRun(ctx, testRun("never", T0)); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
			if engine.CodeOf(err) != engine.CodeNotFound {
				t.Errorf("CodeOf = %s, want %s", engine.CodeOf(err), engine.CodeNotFound)
			}
		})
	}
}

func testCreateSessionDuplicateID(t *testing.T, open func() store.Store) {
	st := open()
	CreateSession(t, st, Session("s1", T0))
	_, _, err := st.CreateSession(context.Background(), Session("s1", T0), "")
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
}

func testCreateSessionIdempotencyKey(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()

	first, created, err := st.CreateSession(ctx, Session("s1", T0), "key-1")
	if err != nil || !created {
		t.Fatalf("first CreateSession = created %v, err %v", created, err)
	}
	again, created, err := st.CreateSession(ctx, Session("s2", T0.Add(time.Second)), "key-1")
	if err != nil {
		t.Fatalf("second CreateSession: %v", err)
	}
	if created {
		t.Error("second CreateSession: created = true, want false")
	}
	if !reflect.DeepEqual(again, first) {
		t.Errorf("second CreateSession returned %+v, want the first session %+v", again, first)
	}
	if _, err := st.Session(ctx, "s2"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Session(s2) err = %v, want ErrNotFound: nothing may be written", err)
	}
	byKey, err := st.SessionByKey(ctx, "key-1")
	if err != nil || !reflect.DeepEqual(byKey, first) {
		t.Errorf("SessionByKey(key-1) = %+v, %v; want the first session", byKey, err)
	}
	for _, key := range []string{"key-2", ""} {
		if _, err := st.SessionByKey(ctx, key); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("SessionByKey(%q) err = %v, want ErrNotFound", key, err)
		}
	}
	// A lookup writes nothing: the key is still free.
	if _, created, err := st.CreateSession(ctx, Session("s3", T0), "key-2"); err != nil || !created {
		t.Errorf("CreateSession after a lookup of its key: created %v, %v", created, err)
	}
}

func testCreateSessionExistingThread(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()

	a := Session("s1", T0)
	a.ThreadKey = "linear:issue-1"
	first := CreateSession(t, st, a)

	b := Session("s2", T0.Add(time.Second))
	b.ThreadKey = "linear:issue-1"
	got, created, err := st.CreateSession(ctx, b, "other-key")
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if created || got.ID != first.ID {
		t.Errorf("CreateSession = (%s, created %v), want (%s, false)", got.ID, created, first.ID)
	}
	// The key was not recorded: it may still create a session of its own.
	c := Session("s3", T0.Add(2*time.Second))
	if _, created, err := st.CreateSession(ctx, c, "other-key"); err != nil || !created {
		t.Errorf("CreateSession with the unrecorded key = created %v, err %v; want a new session", created, err)
	}
	// Sessions without a thread key do not collide with each other.
	CreateSession(t, st, Session("s4", T0))
	CreateSession(t, st, Session("s5", T0))
}

func testCreateSessionConcurrentSameKey(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	st := stores[0]

	const n = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = map[string]int{}
		created int
		errs    []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := Session(fmt.Sprintf("s%02d", i), T0)
			s.ThreadKey = "slack:T:C:1"
			got, ok, err := stores[i%2].CreateSession(ctx, s, "same-key")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			ids[got.ID]++
			if ok {
				created++
			}
		}()
	}
	wg.Wait()

	if len(errs) > 0 {
		t.Fatalf("CreateSession errors: %v", errs)
	}
	if created != 1 {
		t.Errorf("created = %d sessions, want 1", created)
	}
	if len(ids) != 1 {
		t.Errorf("returned ids = %v, want one id for all %d calls", ids, n)
	}
	all, err := st.Sessions(ctx, engine.SessionFilter{})
	if err != nil {
		t.Fatalf("Sessions: %v", err)
	}
	if len(all) != 1 {
		t.Errorf("stored sessions = %v, want 1", sessionIDs(all))
	}
}

func testSessionsFilter(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()

	// b and c share created_at: id breaks the tie, descending.
	for _, s := range []struct {
		id     string
		at     time.Duration
		status engine.Status
	}{
		{"a", 0, engine.StatusIdle},
		{"b", time.Minute, engine.StatusRunning},
		{"c", time.Minute, engine.StatusFailed},
		{"d", 2 * time.Minute, engine.StatusAwaitingInput},
		{"e", 3 * time.Minute, engine.StatusRunning},
	} {
		sess := Session(s.id, T0.Add(s.at))
		sess.Status = s.status
		CreateSession(t, st, sess)
	}

	tests := []struct {
		name   string
		filter engine.SessionFilter
		want   []string
	}{
		{"all newest first", engine.SessionFilter{}, []string{"e", "d", "c", "b", "a"}},
		{"limit", engine.SessionFilter{Limit: 2}, []string{"e", "d"}},
		{"one status", engine.SessionFilter{Statuses: []engine.Status{engine.StatusRunning}}, []string{"e", "b"}},
		{"two statuses", engine.SessionFilter{Statuses: []engine.Status{engine.StatusIdle, engine.StatusFailed}}, []string{"c", "a"}},
		{"status and limit", engine.SessionFilter{Statuses: []engine.Status{engine.StatusRunning}, Limit: 1}, []string{"e"}},
		{"no match", engine.SessionFilter{Statuses: []engine.Status{engine.StatusInterrupted}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.Sessions(ctx, tt.filter)
			if err != nil {
				t.Fatalf("Sessions: %v", err)
			}
			if ids := sessionIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("Sessions = %v, want %v", ids, tt.want)
			}
		})
	}
}
