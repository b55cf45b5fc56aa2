package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"brain/engine"
	"brain/engine/durable"
)

// deliverer renders new events of one platform's sessions as they are
// committed, with a durable cursor per session, and catches up on start-up
// with whatever a restart left undelivered. A failed delivery is retried
// after a pause, so a platform outage delays messages instead of losing them.
type deliverer struct {
	eng    *engine.Engine
	store  durable.DeliveryCursors
	origin string
	now    func() time.Time
	log    *slog.Logger
	// deliver renders events after *cursor, calling save after each one.
	deliver func(ctx context.Context, s engine.Session, cursor *int64, save func() error) error
}

func (d deliverer) run(ctx context.Context) {
	w := d.eng.Watch()
	defer w.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	all, err := d.eng.Sessions(ctx, engine.SessionFilter{})
	if err != nil && ctx.Err() == nil {
		d.log.Error("list sessions to deliver", logErr, err)
	}
	for _, s := range all {
		if s.Origin == d.origin {
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
				d.log.Error("deliver; will retry", logSession, id, logErr, err)
				wg.Add(1)
				go func() {
					defer wg.Done()
					select {
					case <-time.After(5 * time.Second):
						w.Mark(id)
					case <-ctx.Done():
					}
				}()
			}
		}
	}
}

func (d deliverer) one(ctx context.Context, id string) error {
	s, err := d.eng.Session(ctx, id)
	if err != nil || s.Origin != d.origin {
		return err
	}
	cursor, err := d.store.DeliveryCursor(ctx, d.origin, id)
	if err != nil {
		return err
	}
	save := func() error { return d.store.SetDeliveryCursor(ctx, d.now(), d.origin, id, cursor) }
	return d.deliver(ctx, s, &cursor, save)
}
