package bridge

import (
	"context"
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
			if err := d.one(ctx, id); err != nil && ctx.Err() == nil {
				d.Log.Warn("delivery failed; will retry", logSession, id, "retry_in", pause.String(), logErr, err)
				wg.Add(1)
				go func() {
					defer wg.Done()
					select {
					case <-time.After(pause):
						w.Mark(id)
					case <-ctx.Done():
					}
				}()
			}
		}
	}
}

// one renders a session's events after its cursor, saving the cursor
// after each one.
func (d Deliverer) one(ctx context.Context, id string) error {
	s, err := d.Engine.Session(ctx, id)
	if err != nil || s.Origin != d.Origin {
		return err
	}
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
