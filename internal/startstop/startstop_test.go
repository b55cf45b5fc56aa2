package startstop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"brain/internal/startstop"
	"brain/internal/startstop/startstoptest"
)

// TestLifecycle_StartOnceStopAnyTime: start runs once; Stop ends what it
// began, runs cleanup once, and is safe twice; a stopped service does not
// start again.
func TestLifecycle_StartOnceStopAnyTime(t *testing.T) {
	ctx := context.Background()
	var l startstop.Lifecycle
	var starts, cleanups, running atomic.Int32
	up := make(chan struct{}) // closed by the goroutine; a second would panic
	start := func(context.Context) error {
		starts.Add(1)
		l.Go(func(ctx context.Context) {
			running.Add(1)
			defer running.Add(-1)
			close(up)
			<-ctx.Done()
		})
		return nil
	}
	for range 2 {
		if err := l.Start(ctx, start); err != nil {
			t.Fatal(err)
		}
	}
	if starts.Load() != 1 {
		t.Fatalf("start ran %d times", starts.Load())
	}
	<-up
	for range 2 {
		if err := l.Stop(ctx, func() { cleanups.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if running.Load() != 0 || cleanups.Load() != 1 {
		t.Fatalf("after Stop: %d running, cleanup ran %d times", running.Load(), cleanups.Load())
	}
	if err := l.Start(ctx, start); err != nil || starts.Load() != 1 {
		t.Fatalf("Start after Stop: %v, start ran %d times", err, starts.Load())
	}
}

// TestLifecycle_StopBeforeStart: cleanup runs, and Start does nothing
// afterwards.
func TestLifecycle_StopBeforeStart(t *testing.T) {
	var l startstop.Lifecycle
	cleaned := false
	if err := l.Stop(context.Background(), func() { cleaned = true }); err != nil || !cleaned {
		t.Fatalf("Stop before Start: %v, cleaned %v", err, cleaned)
	}
	if err := l.Start(context.Background(), func(context.Context) error {
		t.Error("started after Stop")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycle_FailedStartTriesAgain: a failed start cancels what it
// began and leaves the service startable.
func TestLifecycle_FailedStartTriesAgain(t *testing.T) {
	var l startstop.Lifecycle
	ended := make(chan struct{})
	boom := errors.New("boom")
	err := l.Start(context.Background(), func(context.Context) error {
		l.Go(func(ctx context.Context) { <-ctx.Done(); close(ended) })
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Start = %v, want boom", err)
	}
	<-ended
	again := false
	if err := l.Start(context.Background(), func(context.Context) error { again = true; return nil }); err != nil || !again {
		t.Fatalf("second Start: %v, ran %v", err, again)
	}
	if err := l.Stop(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycle_StopWaitsUntilCtx: Stop waits for a goroutine that does not
// end at once only until its ctx is done; a later Stop sees it end.
func TestLifecycle_StopWaitsUntilCtx(t *testing.T) {
	var l startstop.Lifecycle
	release := make(chan struct{})
	if err := l.Start(context.Background(), func(context.Context) error {
		l.Go(func(context.Context) { <-release })
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Stop(short, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with a goroutine still running = %v, want the deadline", err)
	}
	close(release)
	if err := l.Stop(context.Background(), nil); err != nil {
		t.Fatalf("Stop after the goroutine ended: %v", err)
	}
}

// TestLifecycle_Stress starts and stops many lifecycles from 20 goroutines
// at once (run under -race).
func TestLifecycle_Stress(t *testing.T) {
	for range 20 {
		var l startstop.Lifecycle
		var cleanups atomic.Int32
		startstoptest.Stress(t, funcs{func(ctx context.Context) error {
			return l.Start(ctx, func(context.Context) error {
				l.Go(func(ctx context.Context) { <-ctx.Done() })
				return nil
			})
		}, func(ctx context.Context) error {
			return l.Stop(ctx, func() { cleanups.Add(1) })
		}})
		if cleanups.Load() != 1 {
			t.Fatalf("cleanup ran %d times", cleanups.Load())
		}
	}
}

// funcs is a startstop.Service made of two functions.
type funcs struct{ start, stop func(context.Context) error }

func (f funcs) Start(ctx context.Context) error { return f.start(ctx) }
func (f funcs) Stop(ctx context.Context) error  { return f.stop(ctx) }
