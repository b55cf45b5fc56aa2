package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// testLeases: one owner at a time, renewals keep a lease, expiry hands it
// over, and only the owner releases it.
func testLeases(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	claim := func(key, owner string, now time.Time) bool {
		t.Helper()
		ok, err := st.ClaimLease(ctx, key, owner, now, now.Add(30*time.Second))
		if err != nil {
			t.Fatalf("ClaimLease(%s, %s): %v", key, owner, err)
		}
		return ok
	}
	if !claim("session:a", "r1", t0) {
		t.Fatal("a free lease was not claimed")
	}
	if claim("session:a", "r2", t0.Add(10*time.Second)) {
		t.Fatal("r2 took a lease r1 holds")
	}
	if !claim("session:a", "r1", t0.Add(10*time.Second)) {
		t.Fatal("r1 could not renew its own lease by claiming it again")
	}
	if !claim("session:b", "r2", t0) {
		t.Fatal("r2 could not claim another key")
	}
	held, err := st.RenewLeases(ctx, "r1", t0.Add(20*time.Second), t0.Add(50*time.Second))
	if err != nil || !slices.Equal(held, []engine.HeldLease{{Key: "session:a"}}) {
		t.Fatalf("RenewLeases(r1) = %v, %v; want [session:a]", held, err)
	}
	// Renewed to t0+50s: still r1's at t0+45s, expired at t0+50s.
	if claim("session:a", "r2", t0.Add(45*time.Second)) {
		t.Fatal("r2 took a renewed lease before it expired")
	}
	if !claim("session:a", "r2", t0.Add(50*time.Second)) {
		t.Fatal("r2 could not take an expired lease")
	}
	held, err = st.RenewLeases(ctx, "r1", t0.Add(51*time.Second), t0.Add(80*time.Second))
	if err != nil || len(held) != 0 {
		t.Fatalf("RenewLeases(r1) after losing it = %v, %v; want none", held, err)
	}
	// Only the owner releases.
	if err := st.ReleaseLease(ctx, "session:a", "r1"); err != nil {
		t.Fatal(err)
	}
	if claim("session:a", "r3", t0.Add(60*time.Second)) {
		t.Fatal("a release by a former owner freed r2's lease")
	}
	if err := st.ReleaseLease(ctx, "session:a", "r2"); err != nil {
		t.Fatal(err)
	}
	if !claim("session:a", "r3", t0.Add(60*time.Second)) {
		t.Fatal("a released lease could not be claimed")
	}
	if err := st.ReleaseLease(ctx, "session:none", "r3"); err != nil {
		t.Errorf("releasing a lease never claimed: %v", err)
	}
	// A renewal at a time past the lease's expiry does not revive it.
	held, err = st.RenewLeases(ctx, "r3", t0.Add(2*time.Minute), t0.Add(3*time.Minute))
	if err != nil || len(held) != 0 {
		t.Fatalf("RenewLeases of an expired lease = %v, %v; want none", held, err)
	}
}

// testLeaseRace: owners racing for one key through separate handles (as
// replicas do): exactly one wins.
func testLeaseRace(t *testing.T, open func() store.Store) {
	a, b := open(), open()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for round := range 10 {
		key := "apply:" + string(rune('a'+round))
		var wg sync.WaitGroup
		won := make([]bool, 8)
		errs := make([]error, 8)
		for i := range won {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				won[i], errs[i] = st.ClaimLease(context.Background(), key, "owner"+string(rune('0'+i)), t0, t0.Add(time.Minute))
			}()
		}
		wg.Wait()
		n := 0
		for i, w := range won {
			if errs[i] != nil {
				t.Fatalf("claim: %v", errs[i])
			}
			if w {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s: %d owners won the lease, want 1", key, n)
		}
	}
}

func claimThreads(tb testing.TB, st store.Store, owner string, now time.Time, limit int) []string {
	tb.Helper()
	items, err := st.ClaimInbound(context.Background(), "slack", owner, now, now.Add(time.Minute), limit)
	if err != nil {
		tb.Fatalf("ClaimInbound(%s): %v", owner, err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ThreadKey + ":" + string(it.Payload[6:len(it.Payload)-2])
	}
	return out
}

// testClaimInbound: claims split the inbox between owners, keep each
// thread in order, return an owner's own claims again and hand a dead
// owner's claims over once they expire.
func testClaimInbound(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	record(t, st, t0, inbound("t1", "a1"), inbound("t1", "a2"), inbound("t2", "b1"), inbound("t3", "c1"), inbound("t1", "a3"))

	// r1 claims one: the first of t1.
	if got := claimThreads(t, st, "r1", t0, 1); !slices.Equal(got, []string{"t1:a1"}) {
		t.Fatalf("r1 claimed %v", got)
	}
	// r2 may not take t1's later items while r1 holds a1.
	if got := claimThreads(t, st, "r2", t0, 10); !slices.Equal(got, []string{"t2:b1", "t3:c1"}) {
		t.Fatalf("r2 claimed %v, want [t2:b1 t3:c1]", got)
	}
	// r1 gets its own claim back, and t1's next items behind it.
	if got := claimThreads(t, st, "r1", t0, 10); !slices.Equal(got, []string{"t1:a1", "t1:a2", "t1:a3"}) {
		t.Fatalf("r1 claimed again %v", got)
	}
	// r1 works a1 and dies; once its claims expire r2 takes t1 in order.
	items, err := st.ClaimInbound(ctx, "slack", "r1", t0, t0.Add(time.Minute), 1)
	if err != nil || len(items) != 1 {
		t.Fatal(items, err)
	}
	if err := st.FinishInbound(ctx, t0, []store.Finished{{ID: items[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if got := claimThreads(t, st, "r2", t0.Add(30*time.Second), 10); !slices.Equal(got, []string{"t2:b1", "t3:c1"}) {
		t.Fatalf("r2 claimed %v while r1's claims run, want its own", got)
	}
	if got := claimThreads(t, st, "r2", t0.Add(2*time.Minute), 10); !slices.Equal(got, []string{"t1:a2", "t2:b1", "t3:c1", "t1:a3"}) {
		t.Fatalf("r2 after r1's claims expired claimed %v", got)
	}
}

// testClaimInboundRace: owners claiming at once through separate handles
// never claim one item twice, and a thread's items are claimed in order.
func testClaimInboundRace(t *testing.T, open func() store.Store) {
	handles := []store.Store{open(), open(), open()}
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const threads, perThread = 6, 8
	var items []store.Inbound
	for i := range perThread {
		for th := range threads {
			items = append(items, inbound("t"+string(rune('a'+th)), "k"+string(rune('a'+th))+string(rune('0'+i))))
		}
	}
	record(t, handles[0], t0, items...)

	var mu sync.Mutex
	workedBy := map[int64]string{}
	var order []store.Inbound // in finish order
	var wg sync.WaitGroup
	for i, st := range handles {
		owner := "r" + string(rune('0'+i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				got, err := st.ClaimInbound(ctx, "slack", owner, t0, t0.Add(time.Hour), 4)
				if err != nil {
					t.Errorf("ClaimInbound(%s): %v", owner, err)
					return
				}
				if len(got) == 0 {
					pending, err := st.PendingInbound(ctx, "slack", 1)
					if err != nil || len(pending) == 0 {
						return
					}
					continue
				}
				mu.Lock()
				var done []store.Finished
				for _, it := range got {
					if by, ok := workedBy[it.ID]; ok && by != owner {
						t.Errorf("item %d claimed by %s and %s", it.ID, by, owner)
					}
					if _, ok := workedBy[it.ID]; !ok {
						order = append(order, it)
					}
					workedBy[it.ID] = owner
					done = append(done, store.Finished{ID: it.ID})
				}
				// Finished under the lock, so finish order is the order
				// the items were worked in.
				err = st.FinishInbound(ctx, t0, done)
				mu.Unlock()
				if err != nil {
					t.Errorf("FinishInbound: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(order) != len(items) {
		t.Fatalf("worked %d items, want %d", len(order), len(items))
	}
	last := map[string]int64{}
	for _, it := range order {
		if it.ID < last[it.ThreadKey] {
			t.Fatalf("thread %s: item %d worked after %d", it.ThreadKey, it.ID, last[it.ThreadKey])
		}
		last[it.ThreadKey] = it.ID
	}
}

// renewed is RenewLeases for owner at now, sorted by key.
func renewed(tb testing.TB, st store.Store, owner string, now time.Time) []engine.HeldLease {
	tb.Helper()
	held, err := st.RenewLeases(context.Background(), owner, now, now.Add(30*time.Second))
	if err != nil {
		tb.Fatalf("RenewLeases(%s): %v", owner, err)
	}
	slices.SortFunc(held, func(a, b engine.HeldLease) int { return strings.Compare(a.Key, b.Key) })
	return held
}

// testLeaseStop: a stop requested on a lease reaches its holder on every
// renewal until the lease is claimed again (the next turn) or taken over;
// a cancel is not downgraded by a later interrupt; a request on a free
// key does nothing.
func testLeaseStop(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	request := func(key string, stop engine.StopRequest) {
		t.Helper()
		if err := st.RequestStop(ctx, key, stop); err != nil {
			t.Fatalf("RequestStop(%s, %s): %v", key, stop, err)
		}
	}
	want := func(what string, got []engine.HeldLease, want ...engine.HeldLease) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: renewed %v, want %v", what, got, want)
		}
	}

	// A free key: nothing recorded, nothing claimed.
	request("session:a", engine.StopCancel)
	claimAt(t, st, "session:a", "r1", t0)
	claimAt(t, st, "session:b", "r1", t0)
	want("no request yet", renewed(t, st, "r1", t0.Add(time.Second)),
		engine.HeldLease{Key: "session:a"}, engine.HeldLease{Key: "session:b"})

	request("session:a", engine.StopInterrupt)
	want("interrupt requested", renewed(t, st, "r1", t0.Add(2*time.Second)),
		engine.HeldLease{Key: "session:a", Stop: engine.StopInterrupt}, engine.HeldLease{Key: "session:b"})
	request("session:a", engine.StopCancel)
	request("session:a", engine.StopInterrupt) // does not undo the cancel
	want("cancel requested", renewed(t, st, "r1", t0.Add(3*time.Second)),
		engine.HeldLease{Key: "session:a", Stop: engine.StopCancel}, engine.HeldLease{Key: "session:b"})
	want("renewed again", renewed(t, st, "r1", t0.Add(4*time.Second)),
		engine.HeldLease{Key: "session:a", Stop: engine.StopCancel}, engine.HeldLease{Key: "session:b"})

	// The owner's next claim (its next turn) clears it.
	claimAt(t, st, "session:a", "r1", t0.Add(5*time.Second))
	want("claimed again", renewed(t, st, "r1", t0.Add(6*time.Second)),
		engine.HeldLease{Key: "session:a"}, engine.HeldLease{Key: "session:b"})

	// A takeover clears it too: the request was for the dead owner's turn.
	request("session:b", engine.StopCancel)
	claimAt(t, st, "session:b", "r2", t0.Add(2*time.Minute))
	want("taken over", renewed(t, st, "r2", t0.Add(2*time.Minute+time.Second)), engine.HeldLease{Key: "session:b"})

	// Released, then requested: no row comes back with it.
	if err := st.ReleaseLease(ctx, "session:b", "r2"); err != nil {
		t.Fatal(err)
	}
	request("session:b", engine.StopCancel)
	claimAt(t, st, "session:b", "r3", t0.Add(3*time.Minute))
	want("claimed after release", renewed(t, st, "r3", t0.Add(3*time.Minute+time.Second)), engine.HeldLease{Key: "session:b"})

	if err := st.RequestStop(ctx, "session:b", "pause"); !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("RequestStop(pause) = %v, want ErrInvariant", err)
	}
	if err := st.RequestStop(ctx, "session:b", engine.StopNone); !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("RequestStop(none) = %v, want ErrInvariant", err)
	}
}
