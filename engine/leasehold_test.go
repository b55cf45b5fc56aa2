package engine_test

import (
	"context"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// calls reads how often the store granted a claim of key, and how often
// it was released.
func (k *killableLeases) calls(key string) (claims, releases int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.claims[key], k.releases[key]
}

// Input queued while a turn runs is taken by the next turn under the same
// session lease: back-to-back turns claim and release it once, and the
// lease is free once the session is idle.
func TestReplicas_BackToBackTurnsKeepTheSessionLease(t *testing.T) {
	h := newReplicaHarness(t)
	a, b := h.replica("a"), h.replica("b")
	block := make(chan struct{})
	h.fake.Push(fakemodel.Block(block), fakemodel.Text("second done"))
	s, _, err := a.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Interactive: true, StartedBy: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := a.eng.Send(context.Background(), s.ID, engine.Input{Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	second, _, err := a.eng.Send(context.Background(), s.ID, engine.Input{Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	close(block)
	key := "session:" + s.ID
	_, evs := pollFor(t, a.eng, s.ID, "two turns and the lease released", func(s engine.Session, evs []engine.Event) bool {
		_, released := a.leases.calls(key)
		return s.Status == engine.StatusIdle && count(evs, engine.EventTurnCompleted) == 2 && released > 0
	})
	runs := inputsRun(t, evs)
	if len(runs) != 2 || runs[first.ID] != 1 || runs[second.ID] != 1 {
		t.Fatalf("inputs run %v, want each of %s and %s once; events:\n%s", runs, first.ID, second.ID, dump(evs))
	}
	if claims, releases := a.leases.calls(key); claims != 1 || releases != 1 {
		t.Fatalf("the session lease was granted %d and released %d times for two back-to-back turns, want 1 and 1", claims, releases)
	}
	// Released: the session's next turn can be taken, by b or by a's
	// sweep (this harness's clock makes the input look old to it). The
	// sweeps' claims are granted too, so grants are not counted here.
	h.fake.Push(fakemodel.Text("third done"))
	third, _, err := b.eng.Send(context.Background(), s.ID, engine.Input{Text: "third"})
	if err != nil {
		t.Fatal(err)
	}
	_, evs = pollFor(t, b.eng, s.ID, "the third turn", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && count(evs, engine.EventTurnCompleted) == 3
	})
	if runs := inputsRun(t, evs); runs[third.ID] != 1 {
		t.Fatalf("inputs run %v, want %s once; events:\n%s", runs, third.ID, dump(evs))
	}
}
