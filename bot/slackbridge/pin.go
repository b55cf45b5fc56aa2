package slackbridge

import (
	"context"

	"brain/channels/slack"
	"brain/engine"
)

// pinDelivery keeps a session's delivery on this replica while the reply
// of turn streams (slack.Live.Pin). It is refused while another replica
// delivers the session, and for good (slack.ErrDelivered) when another
// replica delivered the turn already: a turn that ended quickly may have
// been posted whole by a pass that began before it.
func (b *Bridge) pinDelivery(ctx context.Context, sessionID, turn string) (func(), bool, error) {
	release, held, err := b.claims.Acquire(ctx, string(engine.OriginSlack)+":"+sessionID)
	if err != nil || !held {
		return release, held, err
	}
	open, err := b.turnUndelivered(ctx, sessionID, turn)
	if err != nil || !open {
		release()
		if err == nil {
			err = slack.ErrDelivered
		}
		return func() {}, false, err
	}
	return release, true, nil
}

// pinScan bounds the undelivered events pinDelivery reads; a turn
// further behind than that is posted whole.
const pinScan = 500

// turnUndelivered reports whether the rest of turn is still to be
// delivered: one of its events is after the session's cursor, or the last
// event delivered is one of its own and its end is not delivered (the
// turn runs here, delivered as far as it went). Read while holding the delivery,
// so no other replica moves the cursor meanwhile.
func (b *Bridge) turnUndelivered(ctx context.Context, sessionID, turn string) (bool, error) {
	cursor, err := b.store.DeliveryCursor(ctx, string(engine.OriginSlack), sessionID)
	if err != nil {
		return false, err
	}
	after, err := b.eng.Events(ctx, sessionID, cursor, pinScan)
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
	tail, err := b.eng.Events(ctx, sessionID, cursor-back, int(back))
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
