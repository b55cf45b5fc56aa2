package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/internal/startstop/startstoptest"
	"brain/store"
)

func startInbox(t *testing.T, inbox store.Inbox, onSave func()) *Inbox {
	t.Helper()
	in := NewInbox(inbox, fixedNow, onSave)
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return in
}

// TestInbox_RecordReportsDuplicates: Record returns the store's verdict,
// stamped with the clock, and wakes the worker after the commit.
func TestInbox_RecordReportsDuplicates(t *testing.T) {
	var saves atomic.Int32
	inbox := &fakeInbox{RecordInboundFunc: func(_ context.Context, now time.Time, items []store.Inbound) ([]bool, error) {
		if !now.Equal(fixedNow()) {
			t.Errorf("stamped %v", now)
		}
		dup := make([]bool, len(items))
		for i, it := range items {
			dup[i] = it.ThreadKey == "seen"
		}
		return dup, nil
	}}
	in := startInbox(t, inbox, func() { saves.Add(1) })
	for thread, want := range map[string]bool{"new": false, "seen": true} {
		dup, err := in.Record(context.Background(), store.Inbound{Source: "slack", ThreadKey: thread})
		if err != nil || dup != want {
			t.Fatalf("Record(%s) = %v, %v; want %v", thread, dup, err, want)
		}
	}
	if saves.Load() != 2 {
		t.Fatalf("onSave called %d times, want 2", saves.Load())
	}
}

// TestInbox_GroupCommit: Records arriving while a commit is in flight are
// committed together by the other committer, without waiting for the
// first (on PostgreSQL the two transactions run side by side).
func TestInbox_GroupCommit(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var batches []int
	inbox := &fakeInbox{RecordInboundFunc: func(_ context.Context, _ time.Time, items []store.Inbound) ([]bool, error) {
		mu.Lock()
		batches = append(batches, len(items))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release
		}
		return make([]bool, len(items)), nil
	}}
	in := startInbox(t, inbox, nil)
	var wg sync.WaitGroup
	var done atomic.Int32
	record := func(i int) {
		defer wg.Done()
		if _, err := in.Record(context.Background(), store.Inbound{ThreadKey: fmt.Sprint(i)}); err != nil {
			t.Error(err)
		}
		done.Add(1)
	}
	wg.Add(1)
	go record(0)
	<-entered
	const queued = 10
	for i := range queued {
		wg.Add(1)
		go record(i + 1)
	}
	// Every queued record is committed while the first commit is held.
	waitFor(t, "the queued records to commit", func() bool { return done.Load() == queued })
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range batches {
		total += n
	}
	if total != queued+1 || len(batches) > queued+1 || batches[0] != 1 {
		t.Fatalf("batches %v: want 1, then the %d queued records", batches, queued)
	}
}

// TestInbox_StoreErrorFailsTheBatch: every Record of a failed commit gets
// its error, and the worker is not woken.
func TestInbox_StoreErrorFailsTheBatch(t *testing.T) {
	boom := errors.New("disk full")
	inbox := &fakeInbox{RecordInboundFunc: func(context.Context, time.Time, []store.Inbound) ([]bool, error) {
		return nil, boom
	}}
	woken := false
	in := startInbox(t, inbox, func() { woken = true })
	if _, err := in.Record(context.Background(), store.Inbound{}); !errors.Is(err, boom) {
		t.Fatalf("Record = %v, want %v", err, boom)
	}
	if woken {
		t.Fatal("woke the worker after a failed commit")
	}
}

// TestInbox_RecordWaitsForStartAndStopRefuses: nothing commits before
// Start (a Record waits for it, bounded by its ctx); after Stop, Record is
// refused with ErrInboxClosed.
func TestInbox_RecordWaitsForStartAndStopRefuses(t *testing.T) {
	var commits atomic.Int32
	inbox := &fakeInbox{RecordInboundFunc: func(_ context.Context, _ time.Time, items []store.Inbound) ([]bool, error) {
		commits.Add(1)
		return make([]bool, len(items)), nil
	}}
	in := NewInbox(inbox, fixedNow, nil)
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := in.Record(short, store.Inbound{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Record before Start = %v, want the ctx's deadline", err)
	}
	if commits.Load() != 0 {
		t.Fatal("committed before Start")
	}
	ctx := context.Background()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Record(ctx, store.Inbound{}); err != nil || commits.Load() != 1 {
		t.Fatalf("Record after Start: %v, %d commits", err, commits.Load())
	}
	if err := in.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Record(ctx, store.Inbound{}); !errors.Is(err, ErrInboxClosed) {
		t.Fatalf("Record after Stop = %v, want ErrInboxClosed", err)
	}
}

// TestInbox_StopBeforeStart: Record is refused, Start does nothing.
func TestInbox_StopBeforeStart(t *testing.T) {
	in := NewInbox(&fakeInbox{}, fixedNow, nil)
	ctx := context.Background()
	for range 2 {
		if err := in.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Record(ctx, store.Inbound{}); !errors.Is(err, ErrInboxClosed) {
		t.Fatalf("Record = %v, want ErrInboxClosed", err)
	}
}

// TestInbox_StartStopStress starts and stops inboxes from 20 goroutines
// while Records run (under -race): each Record commits, or is refused
// because the inbox stopped.
func TestInbox_StartStopStress(t *testing.T) {
	for range 20 {
		in := NewInbox(&fakeInbox{}, fixedNow, nil)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if _, err := in.Record(ctx, store.Inbound{}); err != nil && !errors.Is(err, ErrInboxClosed) {
					t.Error(err)
				}
			}()
		}
		startstoptest.Stress(t, in)
		wg.Wait()
	}
}

// TestInbox_LeadersHandOn: many concurrent Records, each committed once
// and answered with its own verdict, in batches no larger than maxBatch
// and never more than committers at a time, while the leaders hand the
// queue on to each other.
func TestInbox_LeadersHandOn(t *testing.T) {
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	seen := map[string]int{}
	inbox := &fakeInbox{RecordInboundFunc: func(_ context.Context, _ time.Time, items []store.Inbound) ([]bool, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if len(items) > maxBatch {
			t.Errorf("batch of %d", len(items))
		}
		mu.Lock()
		defer mu.Unlock()
		dup := make([]bool, len(items))
		for i, it := range items {
			seen[it.ThreadKey]++
			dup[i] = strings.HasSuffix(it.ThreadKey, "7")
		}
		return dup, nil
	}}
	in := startInbox(t, inbox, nil)
	const records = 2000
	var wg sync.WaitGroup
	for i := range records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint(i)
			dup, err := in.Record(context.Background(), store.Inbound{ThreadKey: key})
			if err != nil || dup != strings.HasSuffix(key, "7") {
				t.Errorf("Record(%s) = %v, %v", key, dup, err)
			}
		}()
	}
	wg.Wait()
	if len(seen) != records {
		t.Fatalf("%d distinct records committed, want %d", len(seen), records)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("record %s committed %d times", k, n)
		}
	}
	if most.Load() > committers {
		t.Fatalf("%d commits in flight at once, at most %d allowed", most.Load(), committers)
	}
}
