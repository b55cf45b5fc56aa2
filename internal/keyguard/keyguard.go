// Package keyguard checks API keys and throttles the client addresses that
// send wrong ones. The HTTP API's bearer keys and the console's key sign-in
// share one Guard, so a guesser has one budget of wrong keys for both and
// every refusal is counted in one place.
package keyguard

import (
	"crypto/sha256"
	"crypto/subtle"
	"sync/atomic"
	"time"
)

// Key is one configured API key.
type Key struct {
	Name   string
	Secret string
	// ActFor lets the key name the person it acts for.
	ActFor bool
}

// Caller is who a right key authenticates.
type Caller struct {
	Name   string
	ActFor bool
}

// Guard checks keys in constant time, by their SHA-256 (neither length
// nor content leaks through timing; every key is compared, whichever
// matches), and throttles wrong ones per client address (throttle.go).
// Safe for concurrent use.
type Guard struct {
	hashes   [][32]byte
	callers  []Caller
	throttle *throttle

	invalid, throttled atomic.Int64
}

// New returns a guard of keys; now is the clock (time.Now when nil).
func New(keys []Key, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	g := &Guard{throttle: newThrottle(now)}
	for _, k := range keys {
		g.hashes = append(g.hashes, sha256.Sum256([]byte(k.Secret)))
		g.callers = append(g.callers, Caller{Name: k.Name, ActFor: k.ActFor})
	}
	return g
}

// Empty reports whether no key is configured.
func (g *Guard) Empty() bool { return len(g.hashes) == 0 }

// Check authenticates secret sent from remoteAddr (a request's
// RemoteAddr). ok is true for a right key. Otherwise wait is how long the
// address must wait before its next try: above zero the key was not even
// looked at (the address is throttled), zero means a wrong or empty key.
func (g *Guard) Check(remoteAddr, secret string) (c Caller, wait time.Duration, ok bool) {
	addr := clientAddr(remoteAddr)
	if wait := g.throttle.wait(addr); wait > 0 {
		g.throttled.Add(1)
		return Caller{}, wait, false
	}
	c, ok = g.find(secret)
	if !ok {
		g.throttle.fail(addr)
		g.invalid.Add(1)
		return Caller{}, 0, false
	}
	g.throttle.succeed(addr)
	return c, 0, true
}

// Refused counts the refusals so far: wrong or missing keys, and tries
// refused unread while their address waited.
func (g *Guard) Refused() (invalidKey, throttled int64) {
	return g.invalid.Load(), g.throttled.Load()
}

func (g *Guard) find(secret string) (Caller, bool) {
	if secret == "" {
		return Caller{}, false
	}
	h := sha256.Sum256([]byte(secret))
	found := -1
	for i, want := range g.hashes {
		if subtle.ConstantTimeCompare(h[:], want[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Caller{}, false
	}
	return g.callers[found], true
}
