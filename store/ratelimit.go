package store

import (
	"context"
	"sort"
	"time"
)

// RateLimit is one bucket a new turn draws from: Key names it (a person or
// a channel), PerMinute is its rate and its burst (a minute's worth may
// start at once; after that one every minute/PerMinute).
type RateLimit struct {
	Key       string
	PerMinute int
}

// RateLimits keeps the token buckets of rate_limits durably, so a limit
// holds across a restart and every replica draws from the same buckets.
type RateLimits interface {
	// ReserveTurn takes one turn from every bucket of limits in one
	// transaction and returns when it may run: now while each bucket has a
	// token, else the earliest time every one of them will have. A
	// reservation is never given back.
	ReserveTurn(ctx context.Context, now time.Time, limits []RateLimit) (time.Time, error)
	// PruneRateBuckets deletes up to limit buckets that were full again
	// before before (a full bucket is the same as none).
	PruneRateBuckets(ctx context.Context, before time.Time, limit int) (int, error)
}

// CheckRateLimits refuses limits no driver should store, before any I/O,
// and returns them sorted by key with duplicates merged (the strictest
// wins), the order drivers lock buckets in.
func CheckRateLimits(limits []RateLimit) ([]RateLimit, error) {
	byKey := map[string]int{}
	for _, l := range limits {
		if l.Key == "" {
			return nil, invariant("rate limit without a key")
		}
		if l.PerMinute <= 0 {
			return nil, invariant("rate limit %q: per minute must be positive, not %d", l.Key, l.PerMinute)
		}
		if n, ok := byKey[l.Key]; !ok || l.PerMinute < n {
			byKey[l.Key] = l.PerMinute
		}
	}
	out := make([]RateLimit, 0, len(byKey))
	for k, n := range byKey {
		out = append(out, RateLimit{Key: k, PerMinute: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// PaceTurn is the arithmetic both drivers share (GCRA, the generic cell
// rate algorithm: a token bucket kept as one time per bucket). tats[i] is
// the theoretical arrival time of limits[i] (zero: never drawn from). It
// returns when the turn may run and each bucket's new time. The turn runs
// when every bucket conforms, and each bucket is charged as if the turn
// arrived then, so no bucket ever starts more than its burst plus its rate.
func PaceTurn(now time.Time, limits []RateLimit, tats []time.Time) (runAt time.Time, next []time.Time) {
	runAt = now
	for i, l := range limits {
		interval := time.Minute / time.Duration(l.PerMinute)
		tolerance := interval * time.Duration(l.PerMinute-1)
		tat := tats[i]
		if tat.Before(now) {
			tat = now
		}
		if earliest := tat.Add(-tolerance); earliest.After(runAt) {
			runAt = earliest
		}
	}
	next = make([]time.Time, len(limits))
	for i, l := range limits {
		interval := time.Minute / time.Duration(l.PerMinute)
		tat := tats[i]
		if tat.Before(runAt) {
			tat = runAt
		}
		next[i] = tat.Add(interval)
	}
	return runAt, next
}
