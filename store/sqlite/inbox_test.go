package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"brain/store/sqlite"
)

func inbound(thread string, keys ...string) sqlite.Inbound {
	return sqlite.Inbound{Source: "slack", ThreadKey: thread, Kind: "message", Payload: []byte(`{"k":"` + keys[0] + `"}`), DedupeKeys: keys}
}

func TestStore_InboundDedupeAndOrder(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	dup, err := st.RecordInbound(ctx, now, []sqlite.Inbound{
		inbound("t1", "event:E1", "msg:C1:1.0"),
		inbound("t1", "event:E2", "msg:C1:1.0"), // the same mention as message and app_mention
		inbound("t2", "event:E3", "msg:C1:2.0"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(dup) != "[false true false]" {
		t.Fatalf("duplicates %v", dup)
	}
	dup, _ = st.RecordInbound(ctx, now, []sqlite.Inbound{inbound("t2", "event:E3")}) // a retry delivery
	if !dup[0] {
		t.Fatal("retry not deduplicated")
	}
	pending, err := st.PendingInbound(ctx, "slack", 10)
	if err != nil || len(pending) != 2 || pending[0].ThreadKey != "t1" || pending[1].ThreadKey != "t2" || string(pending[0].Payload) != `{"k":"event:E1"}` {
		t.Fatalf("pending %v %+v", err, pending)
	}
	if err := st.FinishInbound(ctx, now, []sqlite.Finished{{ID: pending[0].ID}, {ID: pending[1].ID, Err: "boom"}}); err != nil {
		t.Fatal(err)
	}
	if pending, _ = st.PendingInbound(ctx, "slack", 10); len(pending) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}
	// Keys outlive the retry window, then are pruned.
	if err := st.PruneInbound(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if dup, _ = st.RecordInbound(ctx, now, []sqlite.Inbound{inbound("t1", "event:E1")}); dup[0] {
		t.Fatal("pruned key still deduplicates")
	}
}

func TestStore_InboundConcurrentDuplicates(t *testing.T) {
	stores := twoStores(t)
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dup, err := stores[i%2].RecordInbound(context.Background(), now, []sqlite.Inbound{inbound("t", "event:SAME")})
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
}

func TestStore_KV(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	if _, ok, err := st.Get(ctx, "a"); ok || err != nil {
		t.Fatal(ok, err)
	}
	_ = st.Put(ctx, time.Now(), "a", "1")
	_ = st.Put(ctx, time.Now(), "a", "2")
	if v, ok, err := st.Get(ctx, "a"); v != "2" || !ok || err != nil {
		t.Fatal(v, ok, err)
	}
}
