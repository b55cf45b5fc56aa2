package storetest

import (
	"context"
	"testing"

	"brain/engine"
	"brain/store"
)

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
