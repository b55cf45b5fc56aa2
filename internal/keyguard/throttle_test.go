package keyguard

import (
	"net/netip"
	"testing"
	"time"
)

// The table of failing addresses stays bounded under a flood of
// addresses, and the wait doubles up to maxBackoff.
func TestThrottle_BoundedWithBackoff(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	th := newThrottle(func() time.Time { return now })
	for i := range maxThrottled + 500 {
		th.fail(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	if n := len(th.addrs); n > maxThrottled {
		t.Fatalf("%d addresses remembered, over the bound %d", n, maxThrottled)
	}
	guesser := netip.MustParseAddr("203.0.113.7")
	var waits []time.Duration
	for range freeGuesses + 12 {
		th.fail(guesser)
		waits = append(waits, th.wait(guesser))
	}
	for i, w := range waits[:freeGuesses] {
		if w != 0 {
			t.Fatalf("failure %d: wait %s; the first %d are free", i+1, w, freeGuesses)
		}
	}
	if waits[freeGuesses] != time.Second || waits[freeGuesses+1] != 2*time.Second || waits[len(waits)-1] != maxBackoff {
		t.Fatalf("waits %v; want 1s, 2s, ... up to %s", waits, maxBackoff)
	}
	th.succeed(guesser)
	if th.wait(guesser) != 0 {
		t.Fatal("a right key did not clear the address")
	}
	if a, b := clientAddr("[2001:db8::1]:443"), clientAddr("[2001:db8::ffff]:80"); a != b {
		t.Fatalf("one IPv6 /64 counts as %s and %s", a, b)
	}
}
