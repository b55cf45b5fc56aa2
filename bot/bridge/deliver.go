package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// Deliverer renders new events of one platform's sessions as they are
// committed, with a durable cursor per session, and catches up on start-up
// with whatever a restart left undelivered. A failed delivery is retried
// after a pause, so a platform outage delays messages instead of losing them.
type Deliverer struct {
	Engine Engine
	Store  store.DeliveryCursors
	Origin engine.Origin // the sessions delivered, e.g. engine.OriginSlack
	Now    func() time.Time
	Log    *slog.Logger
	// Renderer renders each event after the session's cursor.
	Renderer Renderer
	// RetryPause is how long a failed delivery waits before it is tried
	// again (0: 5 s).
	RetryPause time.Duration
	// Observe, when set, is told how long each delivery took and how it
	// ended (metrics).
	Observe func(time.Duration, error)
	// Claims shares the session delivery leases with what else holds them
	// on this replica (a streaming reply); nil: the deliverer's own.
	Claims *Claims
}

// deliverBatch is how many events one read of a session's log returns.
const deliverBatch = 100

// errDeliveryHeld: another replica is delivering the session.
var errDeliveryHeld = errors.New("another replica is delivering this session")

// A session another replica was delivering is looked at again after a
// lease time: the holder hears of every commit too and renders it, so the
// second look only matters when the holder died (its lease expired).

// Run delivers until ctx is done.
func (d Deliverer) Run(ctx context.Context) {
	w := d.Engine.Watch()
	defer w.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	pause := d.RetryPause
	if pause <= 0 {
		pause = 5 * time.Second
	}
	if d.Claims == nil {
		d.Claims = &Claims{Leaser: d.Engine}
	}
	all, err := d.Engine.Sessions(ctx, engine.SessionFilter{})
	if err != nil && ctx.Err() == nil {
		d.Log.Error("list sessions to deliver", tools.LogErr, err)
	}
	for _, s := range all {
		if s.Origin == d.Origin {
			w.Mark(s.ID)
		}
	}
	for {
		ids, err := w.Next(ctx)
		if err != nil {
			return
		}
		for _, id := range ids {
			err := d.one(ctx, id)
			if err == nil || ctx.Err() != nil {
				continue
			}
			wait := pause
			if errors.Is(err, errDeliveryHeld) {
				wait = d.Engine.LeaseTTL()
			} else {
				d.Log.Warn("delivery failed; will retry", tools.LogSession, id, tools.LogRetryIn, pause.String(), tools.LogErr, err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-time.After(wait):
					w.Mark(id)
				case <-ctx.Done():
				}
			}()
		}
	}
}

// one renders a session's events after its cursor, saving the cursor
// after each one.
//
// The session's delivery lease makes one replica at a time render it
// (with replicas, each one hears of every commit): one that finds it held
// returns errDeliveryHeld. While a turn runs on another replica, that
// replica delivers the session: it alone has the turn's streamed text, and
// keeps the lease while it streams a reply, so no other replica posts
// that reply a second time. If it dies, the replica that recovers the
// session commits the interruption, and every replica hears of it.
func (d Deliverer) one(ctx context.Context, id string) error {
	s, err := d.Engine.Session(ctx, id)
	if err != nil || s.Origin != d.Origin || d.runsElsewhere(s) {
		return err
	}
	release, held, err := d.Claims.Acquire(ctx, d.Origin, id)
	if err != nil {
		return err
	}
	if !held {
		return errDeliveryHeld
	}
	defer release()
	cursor, err := d.Store.DeliveryCursor(ctx, d.Origin, id)
	if err != nil {
		return err
	}
	start := time.Now()
	n, err := d.render(ctx, s, id, cursor)
	if d.Observe != nil && ctx.Err() == nil && (n > 0 || err != nil) {
		d.Observe(time.Since(start), err)
	}
	return err
}

// runsElsewhere reports whether the session's turn runs on another
// replica, going by s.
func (d Deliverer) runsElsewhere(s engine.Session) bool {
	return s.Status == engine.StatusRunning && d.Engine.SharesStore() && !d.Engine.HoldsSession(s.ID)
}

// turnTaken reports, at a turn's start in the log, whether a replica other
// than this one runs the session now: the pass stops there and leaves the
// rest to it (a pass that began before the turn must not post the reply
// that replica streams).
func (d Deliverer) turnTaken(ctx context.Context, id string, ev engine.Event) (bool, error) {
	if ev.Type != engine.EventTurnStarted || !d.Engine.SharesStore() || d.Engine.HoldsSession(id) {
		return false, nil
	}
	s, err := d.Engine.Session(ctx, id)
	if err != nil {
		return false, err
	}
	return d.runsElsewhere(s), nil
}

// render renders the session's events after cursor, moving the durable
// cursor past each one, and says how many it rendered.
func (d Deliverer) render(ctx context.Context, s engine.Session, id string, cursor int64) (int, error) {
	n := 0
	for {
		evs, err := d.Engine.Events(ctx, id, cursor, deliverBatch)
		if err != nil || len(evs) == 0 {
			return n, err
		}
		for _, ev := range evs {
			if taken, err := d.turnTaken(ctx, id, ev); err != nil || taken {
				return n, err
			}
			if err := d.Renderer.Render(ctx, s, ev); err != nil {
				return n, fmt.Errorf("render %s #%d: %w", ev.Type, ev.Seq, err)
			}
			n++
			cursor = ev.Seq
			if err := d.Store.SetDeliveryCursor(ctx, d.Now(), d.Origin, id, cursor); err != nil {
				return n, err
			}
		}
	}
}
