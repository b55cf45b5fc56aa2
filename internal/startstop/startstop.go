// Package startstop is the one lifecycle every long-lived service of brain
// embeds (the engine, the scheduler, the bridges and their inboxes, the MCP
// catalog, the live feed), after riverqueue/river's startstop: Start runs
// the service's start once and makes the context its goroutines run under,
// Stop is safe before Start, twice and concurrently. It is a leaf: it
// imports nothing of the project, so engine and bot may both use it.
package startstop

import (
	"context"
	"sync"
)

// Service is a long-lived part of the daemon: Start begins its work, Stop
// ends it and waits for it until ctx is done. Both are safe to call in any
// order, twice and concurrently; a service once stopped does not start
// again. startstoptest.Stress checks an implementation.
type Service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Lifecycle is the start/stop bookkeeping a Service embeds: Start runs the
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

// Go runs f in a goroutine with a context that ends at Stop. Call it from
// the start function given to Start, or while the service runs when the
// service's own lock orders the call before Stop (a service that starts a
// goroutine per job: it marks itself stopped under that lock before it
// calls Stop, and checks the mark before Go, so Go never races Stop's
// wait).
func (l *Lifecycle) Go(f func(ctx context.Context)) {
	run := l.run
	l.wg.Add(1) // inside start or ordered before Stop, so it never races Stop's Wait
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
