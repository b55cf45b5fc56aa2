package engine

import (
	"context"
	"sync"
)

// Broker fans what the engine publishes out to its subscribers' feeds: the
// one change-notification mechanism (in the shape of crush's
// pubsub.Broker[T]) behind Watch (ids of sessions that committed) and
// WatchDeltas (streamed text). A publisher never waits: each feed keeps
// what it was sent, folded by the broker's add rule, until its reader
// takes it.
type Broker[T any] struct {
	// add folds x into a feed's unread items (dedupe, merge, bound).
	add func(unread []T, x T) []T

	mu    sync.Mutex
	feeds map[*Feed[T]]struct{}
}

// NewBroker is a broker whose feeds fold items with add; nil appends.
func NewBroker[T any](add func(unread []T, x T) []T) *Broker[T] {
	if add == nil {
		add = func(unread []T, x T) []T { return append(unread, x) }
	}
	return &Broker[T]{add: add}
}

// Subscribe starts a feed of the items keep accepts (nil: every item),
// from now on. Close it when done.
func (b *Broker[T]) Subscribe(keep func(T) bool) *Feed[T] {
	f := &Feed[T]{broker: b, keep: keep, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.feeds == nil {
		b.feeds = map[*Feed[T]]struct{}{}
	}
	b.feeds[f] = struct{}{}
	b.mu.Unlock()
	return f
}

// Publish sends x to every feed that keeps it; a nil broker has none.
func (b *Broker[T]) Publish(x T) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for f := range b.feeds {
		if f.keep == nil || f.keep(x) {
			f.push(x)
		}
	}
}

// Wanted reports whether some feed would keep x, so a publisher can skip
// work nobody reads.
func (b *Broker[T]) Wanted(x T) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for f := range b.feeds {
		if f.keep == nil || f.keep(x) {
			return true
		}
	}
	return false
}

// Feed is one subscription to a Broker: what was published since the
// reader last took it.
type Feed[T any] struct {
	broker *Broker[T]
	keep   func(T) bool

	mu     sync.Mutex
	unread []T
	wake   chan struct{}
}

func (f *Feed[T]) push(x T) {
	f.mu.Lock()
	f.unread = f.broker.add(f.unread, x)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Mark adds x to this feed alone, as if it had been published (e.g. a
// session id to look at again).
func (f *Feed[T]) Mark(x T) { f.push(x) }

// Take returns what arrived so far without waiting (nil if nothing).
func (f *Feed[T]) Take() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.unread
	f.unread = nil
	return out
}

// Next waits until something arrived and returns it.
func (f *Feed[T]) Next(ctx context.Context) ([]T, error) {
	for {
		if out := f.Take(); len(out) > 0 {
			return out, nil
		}
		select {
		case <-f.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Ready is signalled when items may be waiting, for callers that select
// on several sources; Take reads them.
func (f *Feed[T]) Ready() <-chan struct{} { return f.wake }

// Close ends the subscription.
func (f *Feed[T]) Close() {
	f.broker.mu.Lock()
	delete(f.broker.feeds, f)
	f.broker.mu.Unlock()
}
