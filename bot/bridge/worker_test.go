package bridge

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"brain/store"
)

// TestWorker_FinishesHandledAndRetriesLater: handled items are finished
// (a failure with its error), in order; an item refused with ErrRetryLater
// stays pending, as does everything after it, and is worked again; the
// same with a HandleBatch returning the items' errors.
func TestWorker_FinishesHandledAndRetriesLater(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "Handle", true: "HandleBatch"}[batch], func(t *testing.T) {
			testWorkerFinishes(t, batch)
		})
	}
}

func testWorkerFinishes(t *testing.T, batch bool) {
	var mu sync.Mutex
	pending := []store.Inbound{{ID: 1, ThreadKey: "a"}, {ID: 2, ThreadKey: "b"}, {ID: 3, ThreadKey: "c"}, {ID: 4, ThreadKey: "d"}}
	var finished []store.Finished
	var sources []string
	inbox := &fakeInbox{
		PendingInboundFunc: func(_ context.Context, source string, _ int) ([]store.Inbound, error) {
			mu.Lock()
			defer mu.Unlock()
			sources = append(sources, source)
			return append([]store.Inbound(nil), pending...), nil
		},
		FinishInboundFunc: func(_ context.Context, _ time.Time, done []store.Finished) error {
			mu.Lock()
			defer mu.Unlock()
			finished = append(finished, done...)
			for _, f := range done {
				for i, it := range pending {
					if it.ID == f.ID {
						pending = append(pending[:i], pending[i+1:]...)
						break
					}
				}
			}
			return nil
		},
	}
	refusals := 1
	var handled []int64
	w := Worker{
		Store: inbox, Source: "slack", Now: fixedNow, Log: discard(), Wake: make(chan struct{}),
		Handle: func(_ context.Context, it store.Inbound) error {
			handled = append(handled, it.ID)
			switch {
			case it.ID == 2:
				return errors.New("no such agent")
			case it.ID == 3 && refusals > 0:
				refusals--
				return ErrRetryLater
			}
			return nil
		},
	}
	if batch {
		handle := w.Handle
		w.Handle = func(context.Context, store.Inbound) error { panic("Handle called beside HandleBatch") }
		w.HandleBatch = func(ctx context.Context, items []store.Inbound) []error {
			errs := make([]error, len(items))
			for i, it := range items {
				errs[i] = handle(ctx, it)
			}
			return errs
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	waitFor(t, "the inbox to empty", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(pending) == 0
	})
	cancel()
	<-done
	want := []store.Finished{{ID: 1}, {ID: 2, Err: "no such agent"}, {ID: 3}, {ID: 4}}
	if len(finished) != len(want) {
		t.Fatalf("finished %+v, want %+v", finished, want)
	}
	for i := range want {
		if finished[i] != want[i] {
			t.Fatalf("finished %+v, want %+v", finished, want)
		}
	}
	got := []int64{1, 2, 3, 3, 4}
	if batch {
		got = []int64{1, 2, 3, 4, 3, 4} // the batch works every item; 4 waits for 3
	}
	if len(handled) != len(got) {
		t.Fatalf("handled %v, want %v", handled, got)
	}
	for _, s := range sources {
		if s != "slack" {
			t.Fatalf("read source %q", s)
		}
	}
}

// TestWorker_WakesOnSignal: a new recording is worked at once, not at the
// next tick.
func TestWorker_WakesOnSignal(t *testing.T) {
	var mu sync.Mutex
	var next []store.Inbound
	inbox := &fakeInbox{PendingInboundFunc: func(context.Context, string, int) ([]store.Inbound, error) {
		mu.Lock()
		defer mu.Unlock()
		out := next
		next = nil
		return out, nil
	}}
	wake := make(chan struct{}, 1)
	got := make(chan int64, 1)
	w := Worker{Store: inbox, Source: "linear", Now: fixedNow, Log: discard(), Wake: wake,
		Handle: func(_ context.Context, it store.Inbound) error { got <- it.ID; return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	time.Sleep(20 * time.Millisecond) // the worker is waiting now
	mu.Lock()
	next = []store.Inbound{{ID: 7}}
	mu.Unlock()
	wake <- struct{}{}
	select {
	case id := <-got:
		if id != 7 {
			t.Fatalf("worked %d", id)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the wake signal did not start a round")
	}
}
