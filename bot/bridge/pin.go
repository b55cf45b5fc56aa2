package bridge

import (
	"context"

	"brain/engine"
	"brain/store"
)

// Pins is one platform's delivery across replicas as a live reply sees
// it: the claims its Deliverer and its streaming replies share, and the
// pin (claim, "already delivered", release) a reply asks for before it
// writes to its thread. The platform's live replies know nothing of
// replicas, cursors or leases; they call Pin.
type Pins struct {
	Engine Engine
	Store  store.DeliveryCursors
	Origin engine.Origin
	// Claims is shared with the platform's Deliverer (Deliverer.Claims).
	Claims *Claims
}

// NewPins makes the pins of origin's deliveries, with claims of their
// own that the platform's Deliverer is then given.
func NewPins(eng Engine, cursors store.DeliveryCursors, origin engine.Origin) *Pins {
	return &Pins{Engine: eng, Store: cursors, Origin: origin, Claims: &Claims{Leaser: eng}}
}

// Pin keeps the session's delivery on this replica while the reply of
// turn streams. release is nil when the delivery is not pinned: then
// delivered reports that another replica delivered the turn already (a
// turn that ended quickly may have been posted whole by a pass that
// began before it), so the reply must not stream; otherwise another
// replica delivers the session now, and a later Pin may succeed.
func (p *Pins) Pin(ctx context.Context, sessionID, turn string) (release func(), delivered bool, err error) {
	release, held, err := p.Claims.Acquire(ctx, p.Origin, sessionID)
	if err != nil || !held {
		release()
		return nil, false, err
	}
	open, err := p.turnUndelivered(ctx, sessionID, turn)
	if err != nil || !open {
		release()
		return nil, err == nil, err
	}
	return release, false, nil
}

// pinScan bounds the undelivered events Pin reads; a turn further behind
// than that is posted whole.
const pinScan = 500

// turnUndelivered reports whether the rest of turn is still to be
// delivered: one of its events is after the session's cursor, or the last
// event delivered is one of its own and its end is not delivered (the
// turn runs here, delivered as far as it went). Read while holding the
// delivery, so no other replica moves the cursor meanwhile.
func (p *Pins) turnUndelivered(ctx context.Context, sessionID, turn string) (bool, error) {
	cursor, err := p.Store.DeliveryCursor(ctx, p.Origin, sessionID)
	if err != nil {
		return false, err
	}
	after, err := p.Engine.Events(ctx, sessionID, cursor, pinScan)
	if err != nil {
		return false, err
	}
	for _, ev := range after {
		if ev.TurnID == turn {
			return true, nil
		}
	}
	if cursor == 0 {
		return false, nil
	}
	// The turn's end is followed by its status event only, so the last
	// few delivered events show whether it ended.
	back := min(cursor, 4)
	tail, err := p.Engine.Events(ctx, sessionID, cursor-back, int(back))
	if err != nil || len(tail) == 0 {
		return false, err
	}
	for _, ev := range tail {
		if ev.TurnID == turn && ev.Type == engine.EventTurnCompleted {
			return false, nil
		}
	}
	return tail[len(tail)-1].TurnID == turn, nil
}
