package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// logStore is one session and its log in memory: the reads and the commit
// a turn's start makes. Other Store methods are left nil and panic.
type logStore struct {
	Store
	mu           sync.Mutex
	session      Session
	log          []Event
	sessionReads int
}

func (s *logStore) Session(_ context.Context, id string) (Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessionReads++
	return s.session, nil
}

func (s *logStore) Events(_ context.Context, _ string, after int64, _ int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, ev := range s.log {
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (s *logStore) Commit(_ context.Context, c Commit) (CommitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.session
	if c.Update != nil {
		if err := c.Update(&next); err != nil {
			return CommitResult{}, err
		}
	}
	var evs []Event
	for _, ev := range c.Events {
		next.LastSeq++
		ev.Seq, ev.SessionID = next.LastSeq, next.ID
		evs = append(evs, ev)
	}
	s.session, s.log = next, append(s.log, evs...)
	return CommitResult{Session: next, Events: evs}, nil
}

// input appends a user.message as another replica's commit would.
func (s *logStore) input(t *testing.T, text string) Event {
	t.Helper()
	ev, err := NewEvent(Input{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session.LastSeq++
	ev.ID, ev.Seq, ev.SessionID = fmt.Sprintf("evt_in%d", s.session.LastSeq), s.session.LastSeq, s.session.ID
	s.log = append(s.log, ev)
	return ev
}

func turnStartEngine(st Store) *Engine {
	n := 0
	return &Engine{
		store:  st,
		agents: map[string]*Agent{"default": {Name: "default"}},
		now:    func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) },
		newID: func(prefix string) string {
			n++
			return fmt.Sprintf("%s_%d", prefix, n)
		},
	}
}

// takenInputs are the input ids of the last turn.started in the log.
func takenInputs(t *testing.T, st *logStore) []string {
	t.Helper()
	var ids []string
	for _, ev := range st.log {
		if ev.Type == EventTurnStarted {
			var p TurnStarted
			if err := json.Unmarshal(ev.Data, &p); err != nil {
				t.Fatal(err)
			}
			ids = p.InputIDs
		}
	}
	return ids
}

// A session as the input's commit returned it saves the turn's start a
// read; one whose input cursor moved since (its input was taken by a turn
// in between) is refused in the commit, and the start is made again from
// a fresh read, taking only the input still queued.
func TestStartTurn_SeenSession(t *testing.T) {
	ctx := context.Background()
	st := &logStore{session: Session{ID: "ses_1", Agent: "default", Status: StatusIdle}}
	e := turnStartEngine(st)
	first := st.input(t, "first")
	seen := st.session
	tr, err := e.startTurn(ctx, "ses_1", &seen)
	if err != nil {
		t.Fatal(err)
	}
	if st.sessionReads != 0 {
		t.Fatalf("the start read the session %d times, want 0 (it was seen)", st.sessionReads)
	}
	if got := takenInputs(t, st); len(got) != 1 || got[0] != first.ID || len(tr.messages) == 0 {
		t.Fatalf("took %v (context %d messages), want [%s]", got, len(tr.messages), first.ID)
	}

	// The turn ends; a second input comes; the seen session is the one
	// from before the first turn took its input.
	if _, err := st.Commit(ctx, Commit{SessionID: "ses_1", Update: func(s *Session) error { s.Status = StatusIdle; return nil }}); err != nil {
		t.Fatal(err)
	}
	second := st.input(t, "second")
	before := len(st.log)
	if _, err := e.startTurn(ctx, "ses_1", &seen); !errors.Is(err, errStaleSession) {
		t.Fatalf("start with a stale session: %v, want errStaleSession", err)
	}
	if len(st.log) != before {
		t.Fatalf("the refused start wrote %d events", len(st.log)-before)
	}
	reads := st.sessionReads
	tr, err = e.beginTurn(ctx, "ses_1", &seen)
	if err != nil {
		t.Fatal(err)
	}
	if st.sessionReads != reads+1 || tr.inputs[len(tr.inputs)-1].Seq != second.Seq {
		t.Fatalf("%d fresh reads, cursor %d; want 1 and %d", st.sessionReads-reads, tr.inputs[len(tr.inputs)-1].Seq, second.Seq)
	}
	if got := takenInputs(t, st); len(got) != 1 || got[0] != second.ID {
		t.Fatalf("took %v, want [%s] only", got, second.ID)
	}
}
