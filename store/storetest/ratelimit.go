package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"brain/store"
)

// testRateLimits: a bucket lets a minute's worth through at once, then
// one every minute/PerMinute; a turn waits for the slowest of its
// buckets; buckets are shared by handles (replicas) and survive reopening.
func testRateLimits(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	a, b := open(), open()
	person := []store.RateLimit{{Key: "person:U1", PerMinute: 3}}
	var got []time.Duration
	for i := range 5 {
		at, err := []store.Store{a, b}[i%2].ReserveTurn(ctx, T0, person)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, at.Sub(T0))
	}
	want := []time.Duration{0, 0, 0, 20 * time.Second, 40 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reservations at %v; want %v", got, want)
		}
	}
	// A turn of U1 in channel C1 waits for U1's bucket, and charges C1's
	// as if it started then.
	both := []store.RateLimit{{Key: "person:U1", PerMinute: 3}, {Key: "channel:C1", PerMinute: 10}}
	at, err := a.ReserveTurn(ctx, T0, both)
	if err != nil || !at.Equal(T0.Add(time.Minute)) {
		t.Fatalf("reserve U1 in C1 = %v, %v; want T0+1m", at, err)
	}
	// Time passing refills: three minutes on, the person's bucket is full.
	later := T0.Add(4 * time.Minute)
	for i := range 3 {
		if at, err := open().ReserveTurn(ctx, later, person); err != nil || !at.Equal(later) {
			t.Fatalf("reserve %d after refill = %v, %v; want now", i, at, err)
		}
	}
	if _, err := a.ReserveTurn(ctx, T0, []store.RateLimit{{Key: "", PerMinute: 1}}); err == nil {
		t.Error("a bucket without a key was accepted")
	}
	if _, err := a.ReserveTurn(ctx, T0, []store.RateLimit{{Key: "x", PerMinute: 0}}); err == nil {
		t.Error("a bucket of 0 per minute was accepted")
	}
	// Pruning drops buckets full again before the time given, not others.
	n, err := b.PruneRateBuckets(ctx, later.Add(30*time.Second), 10)
	if err != nil || n != 1 {
		t.Errorf("PruneRateBuckets = %d, %v; want 1 (channel:C1)", n, err)
	}
	if at, err := a.ReserveTurn(ctx, later, person); err != nil || !at.Equal(later.Add(20*time.Second)) {
		t.Errorf("person bucket after prune: %v, %v; want its reservations kept", at, err)
	}
}

// testRateLimitsRace: 40 reservations from two handles at once are
// spaced exactly as one writer's would be: 10 at once, then every 6s.
func testRateLimitsRace(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	handles := []store.Store{open(), open()}
	limits := []store.RateLimit{{Key: "person:U1", PerMinute: 10}, {Key: "channel:C1", PerMinute: 20}}
	var (
		mu  sync.Mutex
		got = map[time.Duration]int{}
		wg  sync.WaitGroup
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, err := handles[i%2].ReserveTurn(ctx, T0, limits)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got[at.Sub(T0)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if got[0] != 10 {
		t.Errorf("%d turns at once; want 10: %v", got[0], got)
	}
	for k := 1; k <= 30; k++ {
		if d := time.Duration(k) * 6 * time.Second; got[d] != 1 {
			t.Errorf("%d turns at +%v; want 1: %v", got[d], d, got)
		}
	}
}
