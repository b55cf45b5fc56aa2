package lease

import (
	"context"
	"errors"
	"testing"
	"time"
)

// gatedLeases are Memory whose renewals answer only when the test lets
// them, with what the test says: a heartbeat whose answer is in flight.
type gatedLeases struct {
	Memory
	asked  chan struct{}
	answer chan []Held
}

func (g *gatedLeases) RenewLeases(context.Context, string, time.Time, time.Time) ([]Held, error) {
	g.asked <- struct{}{}
	return <-g.answer, nil
}

func newTestLeaser(st Store) *Holder {
	return &Holder{Store: st, Owner: "rep_test", TTL: 30 * time.Second, Now: time.Now}
}

// A stop requested on a held lease reaches its holder on the heartbeat,
// with the request (a cancel stays a cancel); the holder's next claim, and
// a lease released and claimed again, start clean.
func TestLeaser_StopReachesTheHolder(t *testing.T) {
	ctx := context.Background()
	st := &Memory{}
	l := newTestLeaser(st)
	var got []Stop
	if held, err := l.AcquireStoppable(ctx, "session:s1", nil, func(r Stop) { got = append(got, r) }); err != nil || !held {
		t.Fatalf("acquire = %v, %v", held, err)
	}
	if err := l.Renew(ctx); err != nil || len(got) != 0 {
		t.Fatalf("renew without a request: %v, stops %v", err, got)
	}
	for _, r := range []Stop{StopInterrupt, StopCancel, StopInterrupt} {
		if err := st.RequestStop(ctx, "session:s1", r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RequestStop(ctx, "session:free", StopCancel); err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(ctx); err != nil || len(got) != 1 || got[0] != StopCancel {
		t.Fatalf("renew after the requests: %v, stops %v; want [cancel]", err, got)
	}
	if err := st.RequestStop(ctx, "session:s1", "pause"); !errors.Is(err, ErrUnknownStop) {
		t.Fatalf("RequestStop(pause) = %v, want ErrUnknownStop", err)
	}

	// The turn ends (release) and the next one claims: no stop for it.
	if err := l.Release(ctx, "session:s1"); err != nil {
		t.Fatal(err)
	}
	got = nil
	if held, err := l.AcquireStoppable(ctx, "session:s1", nil, func(r Stop) { got = append(got, r) }); err != nil || !held {
		t.Fatalf("acquire again = %v, %v", held, err)
	}
	if err := l.Renew(ctx); err != nil || len(got) != 0 {
		t.Fatalf("the next turn got the earlier turn's stop: %v, %v", err, got)
	}
	if _, ok := st.leases["session:free"]; ok {
		t.Fatal("a request on a free key created a lease")
	}
}

// A heartbeat whose answer predates a claim tells that claim's holder
// nothing: neither a stop (it was for the turn claimed before) nor a loss.
func TestLeaser_HeartbeatBeforeAClaimIsNotNewsOfIt(t *testing.T) {
	ctx := context.Background()
	st := &gatedLeases{asked: make(chan struct{}), answer: make(chan []Held)}
	l := newTestLeaser(st)
	stopped, lost := 0, 0
	done := make(chan error)
	go func() { done <- l.Renew(ctx) }()
	<-st.asked // the heartbeat is in flight
	if held, err := l.AcquireStoppable(ctx, "session:s1", func() { lost++ }, func(Stop) { stopped++ }); err != nil || !held {
		t.Fatalf("acquire = %v, %v", held, err)
	}
	st.answer <- []Held{{Key: "session:s1", Stop: StopCancel}}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if stopped != 0 || lost != 0 {
		t.Fatalf("a heartbeat older than the claim stopped it (%d) or lost it (%d)", stopped, lost)
	}
	// The next heartbeat speaks of it: a request then is for this turn, and
	// a lease missing is lost.
	go func() { done <- l.Renew(ctx) }()
	<-st.asked
	st.answer <- []Held{{Key: "session:s1", Stop: StopCancel}}
	if err := <-done; err != nil || stopped != 1 {
		t.Fatalf("renew: %v; stops %d, want 1", err, stopped)
	}
	go func() { done <- l.Renew(ctx) }()
	<-st.asked
	st.answer <- nil
	if err := <-done; err != nil || lost != 1 {
		t.Fatalf("renew: %v; lost %d, want 1", err, lost)
	}
}

// releaseGate is Memory whose releases wait for a signal.
type releaseGate struct {
	Memory
	entered chan struct{}
	proceed chan struct{}
}

func (g *releaseGate) ReleaseLease(ctx context.Context, key, owner string) error {
	g.entered <- struct{}{}
	<-g.proceed
	return g.Memory.ReleaseLease(ctx, key, owner)
}

// A key being released stays taken here until the store has dropped it:
// a claim by another goroutine in between would renew the row the release
// then deletes, leaving that goroutine writing under no lease (fenced).
func TestLeaser_ReleaseKeepsTheKeyUntilTheStoreDropsIt(t *testing.T) {
	ctx := context.Background()
	st := &releaseGate{entered: make(chan struct{}), proceed: make(chan struct{})}
	l := &Holder{Store: st, Owner: "r1", TTL: time.Minute, Now: time.Now}
	if held, err := l.Acquire(ctx, "apply:a1", nil); err != nil || !held {
		t.Fatalf("first claim: %v %v", held, err)
	}
	done := make(chan error)
	go func() { done <- l.Release(ctx, "apply:a1") }()
	<-st.entered
	if held, _ := l.Acquire(ctx, "apply:a1", nil); held {
		t.Fatal("claimed here while its release was still on the way to the store")
	}
	close(st.proceed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if held, err := l.Acquire(ctx, "apply:a1", nil); err != nil || !held {
		t.Fatalf("claim after the release: %v %v", held, err)
	}
}
