package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"brain/engine"
	"brain/engine/durable"
)

// Deliverer renders new events of one platform's sessions as they are
// committed, with a durable cursor per session, and catches up on start-up
// with whatever a restart left undelivered. A failed delivery is retried
// after a pause, so a platform outage delays messages instead of losing them.
type Deliverer struct {
	Engine Engine
	Store  durable.DeliveryCursors
	Origin string // the sessions delivered, e.g. engine.OriginSlack
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
}

// deliverBatch is how many events one read of a session's log returns.
const deliverBatch = 100

// errDeliveryHeld: another replica is delivering the session.
var errDeliveryHeld = errors.New("another replica is delivering this session")

// heldPause is how soon a session another replica was delivering is
// looked at again.
const heldPause = 250 * time.Millisecond

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
	all, err := d.Engine.Sessions(ctx, engine.SessionFilter{})
	if err != nil && ctx.Err() == nil {
		d.Log.Error("list sessions to deliver", logErr, err)
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
				wait = heldPause
			} else {
				d.Log.Warn("delivery failed; will retry", logSession, id, "retry_in", pause.String(), logErr, err)
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
// returns errDeliveryHeld and looks again shortly, since the holder may
// have read the log before the newest commit.
func (d Deliverer) one(ctx context.Context, id string) error {
	s, err := d.Engine.Session(ctx, id)
	if err != nil || s.Origin != d.Origin {
		return err
	}
	release, held, err := d.Engine.Lease(ctx, d.Origin+":"+id)
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
