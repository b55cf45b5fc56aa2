package keyguard

import (
	"net/netip"
	"sync"
	"time"
)

// Throttling of wrong API keys: a client address gets freeGuesses wrong
// keys, then waits before each next try, the wait doubling with every
// further failure up to maxBackoff. While it waits, its requests are
// refused without looking at the key, so a guesser learns nothing from
// them. A right key clears the address's record.
const (
	freeGuesses     = 5
	firstBackoff    = time.Second
	maxBackoff      = 15 * time.Minute
	maxThrottled    = 10_000 // addresses remembered; the table never grows past it
	throttleForgets = time.Hour
)

// throttle is the in-memory table of failing client addresses.
type throttle struct {
	mu    sync.Mutex
	now   func() time.Time
	addrs map[netip.Addr]*failures
}

type failures struct {
	count int
	last  time.Time
	until time.Time // refused until then
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, addrs: map[netip.Addr]*failures{}}
}

// wait is how long addr must still wait before its key is checked; zero
// when it may try now.
func (t *throttle) wait(addr netip.Addr) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.addrs[addr]
	if f == nil {
		return 0
	}
	return max(f.until.Sub(t.now()), 0)
}

// fail records a wrong key from addr.
func (t *throttle) fail(addr netip.Addr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	f := t.addrs[addr]
	if f == nil {
		t.makeRoom(now)
		f = &failures{}
		t.addrs[addr] = f
	}
	f.count++
	f.last = now
	if f.count > freeGuesses {
		backoff := maxBackoff
		if shift := f.count - freeGuesses - 1; shift < 20 {
			backoff = min(firstBackoff<<shift, maxBackoff)
		}
		f.until = now.Add(backoff)
	}
}

// succeed forgets addr's failures.
func (t *throttle) succeed(addr netip.Addr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.addrs, addr)
}

// makeRoom keeps the table under maxThrottled: first the addresses quiet
// for throttleForgets and no longer waiting go, then, if it is still full,
// the one that failed longest ago.
func (t *throttle) makeRoom(now time.Time) {
	if len(t.addrs) < maxThrottled {
		return
	}
	var oldest netip.Addr
	var oldestAt time.Time
	for a, f := range t.addrs {
		if now.Sub(f.last) > throttleForgets && !now.Before(f.until) {
			delete(t.addrs, a)
			continue
		}
		if oldestAt.IsZero() || f.last.Before(oldestAt) {
			oldest, oldestAt = a, f.last
		}
	}
	if len(t.addrs) >= maxThrottled {
		delete(t.addrs, oldest)
	}
}

// clientAddr is the address a request came from: the peer, never a
// header a client can write; an IPv6 peer counts as its /64, which one
// host usually holds whole.
func clientAddr(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}
	}
	addr := ap.Addr().Unmap()
	if addr.Is6() {
		if p, err := addr.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return addr
}
