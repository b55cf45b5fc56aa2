package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"brain/engine"
)

// spyStore is the harness's real store, noting where each read of a log
// starts while noting is on.
type spyStore struct {
	engine.Store
	mu     sync.Mutex
	noting bool
	afters []int64
}

func (s *spyStore) Events(ctx context.Context, id string, after int64, limit int) ([]engine.Event, error) {
	s.mu.Lock()
	if s.noting {
		s.afters = append(s.afters, after)
	}
	s.mu.Unlock()
	return s.Store.Events(ctx, id, after, limit)
}

func (s *spyStore) note(on bool) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noting = on
	out := s.afters
	s.afters = nil
	return out
}

// Once a summary is recorded, a turn's start reads the log from the
// context checkpoint, not from its start, and the model still gets the
// summary, the kept notes and the turns after it; the session's usage is
// the running total its commits kept.
func TestCheckpoint_TurnReadsFromTheSummaryOn(t *testing.T) {
	spy := &spyStore{}
	h := newFakeHarness(t, nil, withTools(pageTool(4000), reportTool()), func(c *engine.Config, _ *engine.Agent) {
		spy.Store = c.Store
		c.Store = spy
	})
	h.fake.SetDefault(longSessionScript(t))
	s := h.session()
	h.send(s.ID, "please report")
	h.waitTurns(s.ID, 1)
	for i := 0; i < 3; i++ {
		h.send(s.ID, "fetch more")
		h.waitTurns(s.ID, i+2)
	}
	c, err := h.eng.Compact(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	after, err := h.store.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.ContextSeq == 0 || after.ContextSeq > c.ToSeq {
		t.Fatalf("context checkpoint %d, want in (0, %d]", after.ContextSeq, c.ToSeq)
	}

	spy.note(true)
	changed := h.eng.Changed(s.ID)
	in, _, err := h.eng.Send(ctx, s.ID, engine.Input{Text: "fetch 9"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		got, err := h.store.Session(ctx, s.ID) // the store itself: not noted
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != engine.StatusRunning && got.Checkpoint > in.Seq {
			break
		}
		<-changed
		changed = h.eng.Changed(s.ID)
	}
	reads := spy.note(false)
	if len(reads) == 0 {
		t.Fatal("the turn read no log")
	}
	for _, a := range reads {
		if a < after.ContextSeq {
			t.Errorf("the turn read the log from seq %d, before the checkpoint %d (reads %v)", a, after.ContextSeq, reads)
		}
	}
	reqs := h.fake.Requests()
	if body := string(reqs[len(reqs)-2].Raw); !strings.Contains(body, "SUMMARY-1") || !strings.Contains(body, "ok-42") || !strings.Contains(body, "fetch 9") {
		t.Error("the turn after the compaction does not see the summary, its notes and its input")
	}

	// The usage kept on the session is what the log says.
	_, evs := h.waitTurns(s.ID, 5)
	var want engine.Usage
	for _, ev := range evs {
		switch p, _ := ev.Decode(); p := p.(type) {
		case engine.TurnCompleted:
			want = want.Add(p.Usage)
		case engine.ContextCompacted:
			if ev.TurnID == "" {
				want = want.Add(p.Usage)
			}
		}
	}
	got, err := h.eng.SessionUsage(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || got.InputTokens == 0 {
		t.Errorf("session usage %+v, the log sums to %+v", got, want)
	}
}
