package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"brain/engine"
	"brain/store"
)

// starter is the store as an engine.SessionStarter (an optional
// capability: a store without it is skipped).
func starter(t *testing.T, st store.Store) engine.SessionStarter {
	t.Helper()
	s, ok := st.(engine.SessionStarter)
	if !ok {
		t.Skip("the store starts sessions one at a time (no engine.SessionStarter)")
	}
	return s
}

// mentionStart is a Slack-like start: a session on thread with a
// session.context commit and its first input under an input key.
func mentionStart(id, thread string) engine.SessionStart {
	s := Session(id, T0)
	s.Origin, s.ThreadKey = engine.OriginSlack, thread
	return engine.SessionStart{Session: s, Commits: []engine.Commit{
		{SessionID: id, Now: T0, Events: []engine.Event{{ID: id + "-ctx", Type: engine.EventSessionContext}}},
		{SessionID: id, Now: T0, InputKey: "slack:" + thread, Events: []engine.Event{userMessage(id+"-in", "hello "+thread)}},
	}}
}

// testStartSessions: a batch creates its sessions with their commits in
// order; a start whose thread is bound returns that session and writes
// nothing to it; a start whose commit fails is undone alone.
func testStartSessions(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	ss := starter(t, st)
	bound := Session("bound", T0)
	bound.ThreadKey = "t-bound"
	CreateSession(t, st, bound)

	starts := []engine.SessionStart{mentionStart("s1", "t1"), mentionStart("s2", "t-bound"), mentionStart("s3", "t3"), mentionStart("s4", "t4")}
	starts[2].Commits[1].Update = func(*engine.Session) error { return errors.New("refused") }
	out, err := ss.StartSessions(ctx, starts)
	if err != nil {
		t.Fatalf("StartSessions: %v", err)
	}
	if len(out) != len(starts) {
		t.Fatalf("%d outcomes for %d starts", len(out), len(starts))
	}
	for _, i := range []int{0, 3} {
		o := out[i]
		if o.Err != nil || !o.Created || len(o.Results) != 2 {
			t.Fatalf("start %d: %+v", i, o)
		}
		id := starts[i].Session.ID
		evs, err := st.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(evs)) != fmt.Sprintf("[%s-ctx %s-in]", id, id) || fmt.Sprint(seqs(evs)) != "[1 2]" {
			t.Errorf("session %s events %v seqs %v", id, ids(evs), seqs(evs))
		}
		if o.Session.LastSeq != 2 || o.Results[1].Events[0].ID != id+"-in" {
			t.Errorf("start %d: session %+v, input %+v", i, o.Session, o.Results[1].Events)
		}
		got, err := st.SessionByThread(ctx, starts[i].Session.ThreadKey)
		if err != nil || got.ID != id {
			t.Errorf("thread %s: %v %+v", starts[i].Session.ThreadKey, err, got)
		}
	}
	if o := out[1]; o.Err != nil || o.Created || o.Session.ID != "bound" || len(o.Results) != 0 {
		t.Errorf("start on a bound thread: %+v", o)
	}
	if evs, _ := st.Events(ctx, "bound", 0, 0); len(evs) != 0 {
		t.Errorf("the bound session got events %v", ids(evs))
	}
	if o := out[2]; o.Err == nil || o.Created {
		t.Errorf("start whose commit failed: %+v", o)
	}
	if _, err := st.Session(ctx, "s3"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("the failed start's session: %v, want not found", err)
	}
	if _, err := st.SessionByThread(ctx, "t3"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("the failed start's thread: %v, want unbound", err)
	}
	// An invalid start is refused before any I/O, alone.
	bad := mentionStart("s5", "t5")
	bad.Commits[0].SessionID = "other"
	out, err = ss.StartSessions(ctx, []engine.SessionStart{bad, mentionStart("s6", "t6")})
	if err != nil || !errors.Is(out[0].Err, engine.ErrInvariant) || !out[1].Created {
		t.Errorf("invalid start: %v %+v", err, out)
	}
}

// testStartSessionsRepeat: the same batch again, as a worker repeats it
// when a crash lost its outcomes after the commit, creates nothing twice.
func testStartSessionsRepeat(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	ss := starter(t, st)
	var starts []engine.SessionStart
	for i := range 20 {
		starts = append(starts, mentionStart(fmt.Sprintf("s%02d", i), fmt.Sprintf("t%02d", i)))
	}
	if _, err := ss.StartSessions(ctx, starts); err != nil {
		t.Fatal(err)
	}
	// The repeat has new ids, as a new pass of the engine makes.
	again := make([]engine.SessionStart, len(starts))
	for i, s := range starts {
		again[i] = mentionStart("r"+s.Session.ID, s.Session.ThreadKey)
	}
	out, err := ss.StartSessions(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Err != nil || o.Created || o.Session.ID != starts[i].Session.ID {
			t.Fatalf("repeat %d: %+v", i, o)
		}
	}
	all, err := st.Sessions(ctx, engine.SessionFilter{})
	if err != nil || len(all) != len(starts) {
		t.Fatalf("sessions after the repeat: %v, %d, want %d", err, len(all), len(starts))
	}
	for _, s := range starts {
		if evs, _ := st.Events(ctx, s.Session.ID, 0, 0); len(evs) != 2 {
			t.Errorf("session %s has %d events, want 2", s.Session.ID, len(evs))
		}
	}
}
