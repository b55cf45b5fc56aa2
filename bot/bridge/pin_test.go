package bridge

import (
	"context"
	"testing"

	"brain/engine"
)

// TestPins_ClaimDeliveredOrHeldElsewhere: a live reply's pin is granted
// while its turn has events after the cursor (sharing the claim with the
// deliverer), answers "delivered" once the turn's end is behind the
// cursor, and is refused, not delivered, while another replica holds the
// session's delivery.
func TestPins_ClaimDeliveredOrHeldElsewhere(t *testing.T) {
	ctx := context.Background()
	log := []engine.Event{
		{Seq: 1, Type: engine.EventUserMessage, TurnID: "t1"},
		{Seq: 2, Type: engine.EventTurnStarted, TurnID: "t1"},
		{Seq: 3, Type: engine.EventAgentMessage, TurnID: "t1"},
		{Seq: 4, Type: engine.EventTurnCompleted, TurnID: "t1"},
		{Seq: 5, Type: engine.EventSessionStatus},
	}
	eng := &fakeEngine{EventsFunc: func(_ context.Context, _ string, after int64, limit int) ([]engine.Event, error) {
		if after >= int64(len(log)) {
			return nil, nil
		}
		return log[after:min(int(after)+limit, len(log))], nil
	}}
	cursors := &memCursors{}
	l := &countingLeaser{taken: map[string]bool{}}
	p := &Pins{Engine: eng, Store: cursors, Origin: engine.OriginSlack, Claims: &Claims{Leaser: l}}

	release, delivered, err := p.Pin(ctx, "s1", "t1")
	if err != nil || release == nil || delivered {
		t.Fatalf("undelivered turn: release=%v delivered=%v err=%v, want pinned", release != nil, delivered, err)
	}
	pass, held, _ := p.Claims.Acquire(ctx, engine.OriginSlack, "s1")
	if !held || l.claims != 1 {
		t.Fatalf("the deliverer beside a pinned reply: held=%v claims=%d, want one shared claim", held, l.claims)
	}
	pass()
	release()
	if l.releases != 1 {
		t.Fatalf("%d releases, want 1", l.releases)
	}

	if err := cursors.SetDeliveryCursor(ctx, fixedNow(), engine.OriginSlack, "s1", 5); err != nil {
		t.Fatal(err)
	}
	release, delivered, err = p.Pin(ctx, "s1", "t1")
	if err != nil || release != nil || !delivered {
		t.Fatalf("delivered turn: release=%v delivered=%v err=%v, want delivered", release != nil, delivered, err)
	}
	if l.releases != 2 {
		t.Fatalf("the claim of a delivered turn's pin was kept (%d releases)", l.releases)
	}

	l.taken["slack:s2"] = true
	release, delivered, err = p.Pin(ctx, "s2", "t1")
	if err != nil || release != nil || delivered {
		t.Fatalf("held elsewhere: release=%v delivered=%v err=%v, want refused for now", release != nil, delivered, err)
	}
}
