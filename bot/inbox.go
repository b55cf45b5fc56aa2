package bot

import (
	"context"
	"sync"
	"time"

	"brain/store/sqlite"
)

// maxBatch bounds one group commit.
const maxBatch = 256

// inbox records inbound platform events durably before they are
// acknowledged. Concurrent Records are grouped: while one transaction
// commits, the next requests queue and go into the following one, so many
// webhooks share one fsync (group commit).
type inbox struct {
	store  *sqlite.Store
	now    func() time.Time
	reqs   chan inboxRequest
	onSave func() // wakes the inbox worker

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type inboxRequest struct {
	item  sqlite.Inbound
	reply chan inboxReply
}

type inboxReply struct {
	duplicate bool
	err       error
}

func newInbox(store *sqlite.Store, now func() time.Time, onSave func()) *inbox {
	b := &inbox{store: store, now: now, reqs: make(chan inboxRequest), onSave: onSave, stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// Record stores one item, or reports that one of its dedupe keys was seen.
// When it returns nil the item is durable.
func (b *inbox) Record(ctx context.Context, it sqlite.Inbound) (bool, error) {
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
		items := make([]sqlite.Inbound, len(batch))
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
