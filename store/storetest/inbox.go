package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"brain/store"
)

func inbound(thread string, keys ...string) store.Inbound {
	return store.Inbound{Source: "slack", ThreadKey: thread, Kind: "message", Payload: []byte(`{"k":"` + keys[0] + `"}`), DedupeKeys: keys}
}

func record(tb testing.TB, st store.Inbox, now time.Time, items ...store.Inbound) []bool {
	tb.Helper()
	dup, err := st.RecordInbound(context.Background(), now, items)
	if err != nil {
		tb.Fatalf("RecordInbound: %v", err)
	}
	if len(dup) != len(items) {
		tb.Fatalf("RecordInbound returned %d duplicate flags for %d items", len(dup), len(items))
	}
	return dup
}

func pendingThreads(tb testing.TB, st store.Inbox, source string, limit int) []string {
	tb.Helper()
	items, err := st.PendingInbound(context.Background(), source, limit)
	if err != nil {
		tb.Fatalf("PendingInbound(%s): %v", source, err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ThreadKey
	}
	return out
}

func testInboundDedupeAndOrder(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	dup := record(t, st, now,
		inbound("t1", "event:E1", "msg:C1:1.0"),
		inbound("t1", "event:E2", "msg:C1:1.0"), // the same mention as message and app_mention
		inbound("t2", "event:E3", "msg:C1:2.0"),
	)
	if fmt.Sprint(dup) != "[false true false]" {
		t.Fatalf("duplicates %v", dup)
	}
	if dup = record(t, st, now, inbound("t2", "event:E3")); !dup[0] { // a retry delivery
		t.Fatal("retry not deduplicated")
	}
	pending, err := st.PendingInbound(ctx, "slack", 10)
	if err != nil || len(pending) != 2 || pending[0].ThreadKey != "t1" || pending[1].ThreadKey != "t2" || string(pending[0].Payload) != `{"k":"event:E1"}` {
		t.Fatalf("pending %v %+v", err, pending)
	}
	if p := pending[0]; p.Source != "slack" || p.Kind != "message" || p.Attempts != 0 || !p.CreatedAt.Equal(now) || p.ID == 0 {
		t.Errorf("pending item %+v: want source, kind, no attempts, the record time and an id", p)
	}
	if err := st.FinishInbound(ctx, now, []store.Finished{{ID: pending[0].ID}, {ID: pending[1].ID, Err: "boom"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishInbound(ctx, now, nil); err != nil {
		t.Errorf("FinishInbound(nothing) = %v", err)
	}
	if pending, _ = st.PendingInbound(ctx, "slack", 10); len(pending) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}
	// Finished items keep their keys: a late retry is still a duplicate.
	if dup = record(t, st, now, inbound("t1", "event:E1")); !dup[0] {
		t.Fatal("finished item's key no longer deduplicates")
	}
	// Keys outlive the retry window, then are pruned.
	if err := st.PruneInbound(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if dup = record(t, st, now, inbound("t1", "event:E1")); dup[0] {
		t.Fatal("pruned key still deduplicates")
	}
}

// testInboundPerSource: each source's items come back oldest first, up to
// the limit, without the other sources' items.
func testInboundPerSource(t *testing.T, open func() store.Store) {
	st := open()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	linear := func(thread, key string) store.Inbound {
		it := inbound(thread, key)
		it.Source = "linear"
		return it
	}
	record(t, st, now, inbound("s1", "slack:1"), linear("l1", "linear:1"))
	record(t, st, now.Add(time.Second), inbound("s2", "slack:2"), inbound("s3", "slack:3"))
	record(t, st, now.Add(2*time.Second), linear("l2", "linear:2"))

	if got := pendingThreads(t, st, "slack", 10); !slices.Equal(got, []string{"s1", "s2", "s3"}) {
		t.Errorf("slack pending = %v, want [s1 s2 s3]", got)
	}
	if got := pendingThreads(t, st, "slack", 2); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("slack pending, limit 2 = %v, want [s1 s2]", got)
	}
	if got := pendingThreads(t, st, "linear", 10); !slices.Equal(got, []string{"l1", "l2"}) {
		t.Errorf("linear pending = %v, want [l1 l2]", got)
	}
	if got := pendingThreads(t, st, "console", 10); len(got) != 0 {
		t.Errorf("pending of a source without items = %v, want none", got)
	}
}

// testInboundPruneKeepsPending: pruning forgets old keys and finished
// items, never an item still waiting to be worked.
func testInboundPruneKeepsPending(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	record(t, st, now, inbound("waiting", "event:W"), inbound("worked", "event:D"))
	items, err := st.PendingInbound(ctx, "slack", 10)
	if err != nil || len(items) != 2 {
		t.Fatalf("PendingInbound = %+v, %v", items, err)
	}
	if err := st.FinishInbound(ctx, now, []store.Finished{{ID: items[1].ID}}); err != nil {
		t.Fatal(err)
	}
	// Prune before anything is old enough: nothing changes.
	if err := st.PruneInbound(ctx, now); err != nil {
		t.Fatal(err)
	}
	if dup := record(t, st, now, inbound("worked", "event:D")); !dup[0] {
		t.Error("a key younger than the prune time was forgotten")
	}
	if err := st.PruneInbound(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := pendingThreads(t, st, "slack", 10); !slices.Equal(got, []string{"waiting"}) {
		t.Errorf("pending after prune = %v, want [waiting]", got)
	}
}

func testInboundConcurrentDuplicates(t *testing.T, open func() store.Store) {
	stores := [2]store.Store{open(), open()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dup, err := stores[i%2].RecordInbound(context.Background(), T0, []store.Inbound{inbound("t", "event:SAME")})
			if err != nil {
				t.Error(err)
				return
			}
			if !dup[0] {
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if fresh != 1 {
		t.Fatalf("%d recorded, want 1", fresh)
	}
	if got := pendingThreads(t, stores[0], "slack", 50); len(got) != 1 {
		t.Errorf("pending = %v, want the one recorded item", got)
	}
}

// testInboundBatchOfDistinctKeys: a large group commit whose items share
// no key (the intake's usual batch), some of them retries of earlier
// events: the retries are duplicates, the rest are stored in order with
// their payloads, and a duplicate's fresh keys are not kept.
func testInboundBatchOfDistinctKeys(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	record(t, st, now, inbound("old", "event:old"))
	var items []store.Inbound
	for i := range 100 {
		items = append(items, inbound(fmt.Sprintf("t%03d", i), fmt.Sprintf("event:%d", i), fmt.Sprintf("msg:%d", i)))
	}
	// A retry of the old event under a new message key: a duplicate, and
	// its new key stays free.
	items[50] = inbound("t050", "msg:fresh", "event:old")
	dup := record(t, st, now, items...)
	for i, d := range dup {
		if d != (i == 50) {
			t.Fatalf("item %d duplicate = %v", i, d)
		}
	}
	got := pendingThreads(t, st, "slack", -1)
	if len(got) != 100 || got[0] != "old" || got[1] != "t000" || got[99] != "t099" || slices.Contains(got, "t050") {
		t.Fatalf("pending threads %v", got)
	}
	pending, err := st.PendingInbound(ctx, "slack", 3)
	if err != nil || string(pending[2].Payload) != `{"k":"event:1"}` {
		t.Fatalf("pending %v %+v", err, pending)
	}
	if dup = record(t, st, now, inbound("t050", "msg:fresh"), inbound("t001", "event:1")); dup[0] || !dup[1] {
		t.Fatalf("after the batch: duplicates %v, want [false true]", dup)
	}
}

// testInboundBatchSharedKeys: items of one batch that share keys are
// settled as if recorded one by one: a duplicate frees the keys it took,
// so a later item holding only those is not one, and an item naming one
// key twice is not a duplicate of itself.
func testInboundBatchSharedKeys(t *testing.T, open func() store.Store) {
	st := open()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	record(t, st, now, inbound("old", "event:old"))
	dup := record(t, st, now,
		inbound("a", "k1"),
		inbound("b", "k2", "k1"), // k1 is a's: b is a duplicate, k2 free again
		inbound("c", "k2"),
		inbound("d", "k3", "k3"),
		inbound("e", "k4", "event:old"), // k4 free again
		inbound("f", "k5", "k4"),
		inbound("g", "k7", "k1"), // k7 free again, and nobody takes it
	)
	if fmt.Sprint(dup) != "[false true false false true false true]" {
		t.Fatalf("duplicates %v, want [false true false false true false true]", dup)
	}
	if got := pendingThreads(t, st, "slack", -1); fmt.Sprint(got) != "[old a c d f]" {
		t.Fatalf("pending threads %v, want [old a c d f]", got)
	}
	dup = record(t, st, now, inbound("x", "k2"), inbound("y", "k3"), inbound("z", "k4"), inbound("w", "k6"), inbound("v", "k7"))
	if fmt.Sprint(dup) != "[true true true false false]" {
		t.Fatalf("after the batch: duplicates %v, want [true true true false false]", dup)
	}
}
