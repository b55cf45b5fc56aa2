package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"brain/engine/durable"
)

// maxBatch bounds one group commit.
const maxBatch = 256

// inbox records inbound platform events durably before they are
// acknowledged. Concurrent Records are grouped: while one transaction
// commits, the next requests queue and go into the following one, so many
// webhooks share one fsync (group commit).
type inbox struct {
	store  durable.Inbox
	now    func() time.Time
	reqs   chan inboxRequest
	onSave func() // wakes the inbox worker

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type inboxRequest struct {
	item  durable.Inbound
	reply chan inboxReply
}

type inboxReply struct {
	duplicate bool
	err       error
}

func newInbox(store durable.Inbox, now func() time.Time, onSave func()) *inbox {
	b := &inbox{store: store, now: now, reqs: make(chan inboxRequest), onSave: onSave, stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// Record stores one item, or reports that one of its dedupe keys was seen.
// When it returns nil the item is durable.
func (b *inbox) Record(ctx context.Context, it durable.Inbound) (bool, error) {
	req := inboxRequest{item: it, reply: make(chan inboxReply, 1)}
	select {
	case b.reqs <- req:
	case <-ctx.Done():
		return false, ctx.Err()
	case <-b.stop:
		return false, errInboxClosed
	}
	select {
	case r := <-req.reply:
		return r.duplicate, r.err
	case <-ctx.Done():
		// It may still commit; the platform's retry is deduplicated.
		return false, ctx.Err()
	}
}

func (b *inbox) run() {
	defer close(b.done)
	for {
		var first inboxRequest
		select {
		case first = <-b.reqs:
		case <-b.stop:
			return
		}
		batch := []inboxRequest{first}
	collect:
		for len(batch) < maxBatch {
			select {
			case r := <-b.reqs:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		items := make([]durable.Inbound, len(batch))
		for i, r := range batch {
			items[i] = r.item
		}
		dup, err := b.store.RecordInbound(context.Background(), b.now(), items)
		for i, r := range batch {
			if err != nil {
				r.reply <- inboxReply{err: err}
			} else {
				r.reply <- inboxReply{duplicate: dup[i]}
			}
		}
		if err == nil && b.onSave != nil {
			b.onSave()
		}
	}
}

// Close stops taking records; it waits for the batch in flight.
func (b *inbox) Close() {
	b.once.Do(func() { close(b.stop) })
	<-b.done
}

type inboxError string

func (e inboxError) Error() string { return string(e) }

const errInboxClosed = inboxError("inbox is closed: brain is shutting down")

// errRetryLater leaves an inbox item pending: it is worked again shortly.
var errRetryLater = errors.New("retry later")

// inboxWorker handles one source's recorded events, oldest first. An event
// the engine cannot take yet (its run queue is full) waits in the inbox, so
// load never turns into errors for the platform.
type inboxWorker struct {
	store  durable.Inbox
	source string
	now    func() time.Time
	log    *slog.Logger
	wake   <-chan struct{}
	handle func(context.Context, durable.Inbound) error
}

func (w inboxWorker) run(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	pruned := time.Time{}
	for {
		items, err := w.store.PendingInbound(ctx, w.source, 50)
		if err != nil && ctx.Err() == nil {
			w.log.Error("read inbox", logErr, err)
		}
		backoff := false
		// Outcomes are written in one transaction per batch. A crash before
		// that re-works the batch: input is idempotent per platform message
		// and a repeated click meets a decided approval or a closed question.
		var done []durable.Finished
		for _, it := range items {
			err := w.handle(ctx, it)
			if errors.Is(err, errRetryLater) || ctx.Err() != nil {
				backoff = true
				break
			}
			f := durable.Finished{ID: it.ID}
			if err != nil {
				f.Err = err.Error()
				w.log.Error("inbound event failed", "thread", it.ThreadKey, logErr, err)
			}
			done = append(done, f)
		}
		if err := w.store.FinishInbound(context.WithoutCancel(ctx), w.now(), done); err != nil {
			w.log.Error("finish inbox items", logErr, err)
		}
		if now := w.now(); now.Sub(pruned) > time.Hour {
			pruned = now
			if err := w.store.PruneInbound(ctx, now.Add(-24*time.Hour)); err != nil && ctx.Err() == nil {
				w.log.Error("prune inbox", logErr, err)
			}
		}
		switch {
		case len(items) == 50 && !backoff:
			continue
		case backoff:
			// The run queue is full: the event waits here, durable, and is
			// tried again shortly.
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			continue
		}
		select {
		case <-w.wake:
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}
