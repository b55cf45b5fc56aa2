package bridge

import (
	"context"
	"sync"
)

// Lifecycle is the start/stop bookkeeping every long-lived service of the
// bridges shares, after riverqueue/river's startstop: Start runs the
// service's start once, Stop is safe before Start, twice and concurrently,
// and a service once stopped does not start again (its parts, a Slack
// poster for one, are closed for good). The zero value is ready.
type Lifecycle struct {
	mu      sync.Mutex
	started bool
	stopped bool
	run     context.Context // the goroutines' context, ended by Stop
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	ended   chan struct{} // closed once the goroutines ended and cleanup ran
}

// Start calls start once, unless the service already started or was
// stopped. The goroutines start begins with Go run until Stop, not until
// ctx ends: ctx bounds start-up only. When start fails, what it began with
// Go is cancelled and a later Start tries again. A concurrent Stop waits
// for start to return.
func (l *Lifecycle) Start(ctx context.Context, start func(ctx context.Context) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.stopped {
		return nil
	}
	l.run, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := start(ctx); err != nil {
		l.cancel()
		return err
	}
	l.started = true
	return nil
}

// Go runs f in a goroutine with a context that ends at Stop. Call it only
// from the start function given to Start.
func (l *Lifecycle) Go(f func(ctx context.Context)) {
	run := l.run
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f(run)
	}()
}

// Stop cancels the goroutines begun with Go and, once they all ended,
// calls cleanup (the first Stop's; it runs even if the service never
// started, so it must be safe then). It waits for both until ctx is done,
// then returns ctx's error while they go on ending; a later Stop waits
// again.
func (l *Lifecycle) Stop(ctx context.Context, cleanup func()) error {
	l.mu.Lock()
	l.stopped = true
	if l.ended == nil {
		l.ended = make(chan struct{})
		if l.cancel != nil {
			l.cancel()
		}
		go func() {
			l.wg.Wait()
			if cleanup != nil {
				cleanup()
			}
			close(l.ended)
		}()
	}
	ended := l.ended
	l.mu.Unlock()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-ended: // both were ready
		return nil
	default:
		return ctx.Err()
	}
}
