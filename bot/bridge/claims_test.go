package bridge

import (
	"context"
	"testing"

	"brain/engine"
)

// countingLeaser is a Leaser that counts claims and releases and refuses
// keys in taken (held by another replica).
type countingLeaser struct {
	claims, releases int
	taken            map[string]bool
}

func (c *countingLeaser) LeaseDelivery(_ context.Context, origin engine.Origin, id string) (func(), bool, error) {
	if c.taken[string(origin)+":"+id] {
		return func() {}, false, nil
	}
	c.claims++
	return func() { c.releases++ }, true, nil
}

// TestClaims_ShareOneLeaseAmongHolders: holders on one replica share one
// claim on the engine, released when the last of them lets go (each
// release counting once); a key another replica holds is refused.
func TestClaims_ShareOneLeaseAmongHolders(t *testing.T) {
	ctx := context.Background()
	l := &countingLeaser{taken: map[string]bool{"slack:other": true}}
	c := &Claims{Leaser: l}
	stream, held, err := c.Acquire(ctx, engine.OriginSlack, "s1")
	if err != nil || !held {
		t.Fatalf("first holder: held=%v err=%v", held, err)
	}
	pass, held, err := c.Acquire(ctx, engine.OriginSlack, "s1")
	if err != nil || !held {
		t.Fatalf("second holder on the same replica: held=%v err=%v", held, err)
	}
	if l.claims != 1 {
		t.Fatalf("%d claims on the engine, want 1 shared", l.claims)
	}
	pass()
	pass() // a second call of one release counts once
	if l.releases != 0 {
		t.Fatal("the lease was let go while the stream still holds it")
	}
	stream()
	if l.releases != 1 {
		t.Fatalf("%d releases after the last holder, want 1", l.releases)
	}
	if _, held, _ := c.Acquire(ctx, engine.OriginSlack, "other"); held {
		t.Fatal("a key another replica holds was granted")
	}
	again, held, _ := c.Acquire(ctx, engine.OriginSlack, "s1")
	if !held || l.claims != 2 {
		t.Fatalf("claim after release: held=%v claims=%d", held, l.claims)
	}
	again()
}

// TestDeliverer_LeavesATurnRunningElsewhereToItsReplica: with replicas, a
// session whose turn runs on another replica is not delivered here (not
// even its lease is claimed); once this replica holds the session it is.
// A pass that meets the start of a turn another replica now runs stops
// before it, so that replica alone renders the turn (its streamed reply).
func TestDeliverer_LeavesATurnRunningElsewhereToItsReplica(t *testing.T) {
	ctx := context.Background()
	log := []engine.Event{
		{Seq: 1, Type: engine.EventUserMessage},
		{Seq: 2, Type: engine.EventTurnStarted},
		{Seq: 3, Type: engine.EventAgentMessage},
	}
	status := engine.StatusRunning
	eng := &fakeEngine{
		Shared: true,
		Holds:  map[string]bool{},
		SessionFunc: func(context.Context, string) (engine.Session, error) {
			return engine.Session{ID: "s1", Origin: engine.OriginSlack, Status: status}, nil
		},
		EventsFunc: func(_ context.Context, _ string, after int64, _ int) ([]engine.Event, error) {
			if after >= int64(len(log)) {
				return nil, nil
			}
			return log[after:], nil
		},
	}
	var rendered []int64
	cursors := &memCursors{}
	d := Deliverer{Engine: eng, Store: cursors, Origin: engine.OriginSlack, Now: fixedNow, Log: discard(), Claims: &Claims{Leaser: eng},
		Renderer: renderFunc(func(_ context.Context, _ engine.Session, ev engine.Event) error {
			rendered = append(rendered, ev.Seq)
			if ev.Seq == 1 {
				status = engine.StatusRunning // another replica starts the turn meanwhile
			}
			return nil
		})}

	if err := d.one(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if len(rendered) != 0 || eng.leases.Load() != 0 {
		t.Fatalf("a turn running elsewhere: rendered %v with %d lease claims, want nothing", rendered, eng.leases.Load())
	}

	status = engine.StatusIdle // seen idle at the pass's start
	if err := d.one(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := cursors.DeliveryCursor(ctx, engine.OriginSlack, "s1"); len(rendered) != 1 || got != 1 {
		t.Fatalf("rendered %v, cursor %d: want the pass stopped before the turn another replica runs", rendered, got)
	}

	eng.Holds["s1"] = true // this replica runs the session now
	if err := d.one(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := cursors.DeliveryCursor(ctx, engine.OriginSlack, "s1"); len(rendered) != 3 || got != 3 {
		t.Fatalf("rendered %v, cursor %d: want the whole log once this replica runs the turn", rendered, got)
	}
}
