package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Leases are time-limited claims on work, kept in the store so that
// replicas sharing it never do one piece of work at once: a session's turn
// ("session:<id>"), an approval's apply ("apply:<id>"), a session's
// delivery to a platform. A holder renews its leases while it works
// (a heartbeat); a replica that dies stops renewing, its leases expire, and
// another replica takes the work over. Keys and owners are opaque text.
type Leases interface {
	// ClaimLease takes the lease on key for owner until until, or renews
	// owner's own; claimed is false (nothing written) when another owner
	// holds a lease on key that is still running at now. A claim clears
	// the lease's stop request: it asked the work claimed before to stop.
	ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (claimed bool, err error)
	// RenewLeases moves to until every lease owner holds that is still
	// running at now, and returns them with their stop requests: a lease
	// missing from them was lost (it expired, and someone may have taken
	// it).
	RenewLeases(ctx context.Context, owner string, now, until time.Time) (held []HeldLease, err error)
	// ReleaseLease drops owner's lease on key; releasing a lease not held
	// is not an error.
	ReleaseLease(ctx context.Context, key, owner string) error
	// RequestStop records on the lease on key, whoever holds it, that its
	// work should stop (a session's turn, cancelled or interrupted); the
	// holder learns of it on its next renewal. A cancel is not downgraded
	// to an interrupt by a later request. Without a lease on key it does
	// nothing.
	RequestStop(ctx context.Context, key string, stop StopRequest) error
}

// HeldLease is a lease RenewLeases renewed, and what was asked of its
// holder.
type HeldLease struct {
	Key  string
	Stop StopRequest
}

// StopRequest is what another replica asked of a lease's holder: stop the
// session's turn, as cancelled or as interrupted by new input. It is kept
// on the lease, so a holder that missed the fast notice (Peers) still
// learns of it on its heartbeat.
type StopRequest string

// Stop requests; StopNone is none.
const (
	StopNone      StopRequest = ""
	StopCancel    StopRequest = "cancel"
	StopInterrupt StopRequest = "interrupt"
)

// Valid reports whether r is a request a store may record.
func (r StopRequest) Valid() bool { return r == StopCancel || r == StopInterrupt }

// Merge is the request that stands after r when next arrives: a cancel
// is never turned into an interrupt.
func (r StopRequest) Merge(next StopRequest) StopRequest {
	if r == StopCancel {
		return r
	}
	return next
}

// Lease keys.
func sessionLease(id string) string { return "session:" + id }
func applyLease(id string) string   { return "apply:" + id }
func deliveryLease(k string) string { return "deliver:" + k }

// memLeases is the Leases of an engine that is alone on its store (an
// embedded engine, tests, SQLite under its file lock): the same claims,
// kept in memory, since no other process can contend for them.
type memLeases struct {
	mu     sync.Mutex
	leases map[string]memLease
}

type memLease struct {
	owner string
	until time.Time
	stop  StopRequest
}

func (m *memLeases) ClaimLease(_ context.Context, key, owner string, now, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok && l.owner != owner && l.until.After(now) {
		return false, nil
	}
	if m.leases == nil {
		m.leases = map[string]memLease{}
	}
	m.leases[key] = memLease{owner: owner, until: until}
	return true, nil
}

func (m *memLeases) RenewLeases(_ context.Context, owner string, now, until time.Time) ([]HeldLease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var held []HeldLease
	for k, l := range m.leases {
		if l.owner == owner && l.until.After(now) {
			l.until = until
			m.leases[k] = l
			held = append(held, HeldLease{Key: k, Stop: l.stop})
		}
	}
	return held, nil
}

func (m *memLeases) RequestStop(_ context.Context, key string, stop StopRequest) error {
	if !stop.Valid() {
		return invariant("request stop on lease %s: unknown request %q", key, stop)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok {
		l.stop = l.stop.Merge(stop)
		m.leases[key] = l
	}
	return nil
}

func (m *memLeases) ReleaseLease(_ context.Context, key, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok && l.owner == owner {
		delete(m.leases, key)
	}
	return nil
}

// leaser holds this engine's leases: it claims them in the store, renews
// them on a heartbeat and remembers which it holds, so that two of the
// engine's own goroutines never share one (the store sees one owner).
type leaser struct {
	store Leases
	owner string
	ttl   time.Duration
	now   func() time.Time
	// exclusive: no other engine shares the store, so a lease another
	// owner left is an earlier process's, dead by definition.
	exclusive bool

	mu   sync.Mutex
	held map[string]heldLease
	seq  uint64 // counts acquisitions, so a heartbeat can tell newer ones
}

type heldLease struct {
	// seq is when the claim was made (claimed: the store answered), so a
	// heartbeat answered before it is not taken as news of this claim.
	seq    uint64
	onLost func()
	onStop func(StopRequest)
}

// unclaimed is the seq of a lease still being claimed: no heartbeat
// speaks of it yet.
const unclaimed = ^uint64(0)

// acquire claims key unless this engine already holds it; onLost (may be
// nil) is called if the heartbeat finds the lease lost. held is false
// when another owner (or another goroutine here) has it.
func (l *leaser) acquire(ctx context.Context, key string, onLost func()) (bool, error) {
	return l.acquireStoppable(ctx, key, onLost, nil)
}

// acquireStoppable is acquire for work another replica may ask to stop:
// onStop (may be nil) is called with each stop request a heartbeat finds
// on the lease.
func (l *leaser) acquireStoppable(ctx context.Context, key string, onLost func(), onStop func(StopRequest)) (bool, error) {
	l.mu.Lock()
	if _, busy := l.held[key]; busy {
		l.mu.Unlock()
		return false, nil
	}
	if onLost == nil {
		onLost = func() {}
	}
	if onStop == nil {
		onStop = func(StopRequest) {}
	}
	if l.held == nil {
		l.held = map[string]heldLease{}
	}
	l.held[key] = heldLease{seq: unclaimed, onLost: onLost, onStop: onStop}
	l.mu.Unlock()
	now := l.now()
	until := now.Add(l.ttl)
	asOf := now
	if l.exclusive {
		asOf = until
	}
	ok, err := l.store.ClaimLease(ctx, key, l.owner, asOf, until)
	if err != nil || !ok {
		l.forget(key)
		if err != nil {
			return false, fmt.Errorf("claim lease %s: %w", key, err)
		}
		return false, nil
	}
	l.mu.Lock()
	if h, ok := l.held[key]; ok {
		l.seq++
		h.seq = l.seq
		l.held[key] = h
	}
	l.mu.Unlock()
	return true, nil
}

// holds reports whether this engine holds key (or is claiming it).
func (l *leaser) holds(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[key]
	return ok
}

// release drops key; a failure is only logged by the caller, since the
// lease expires on its own.
//
// The key stays taken here until the store has dropped it: another
// goroutine here that claimed it in between would renew the row this
// release then deletes, and write under a lease nobody holds (its commits
// fenced).
func (l *leaser) release(ctx context.Context, key string) error {
	err := l.store.ReleaseLease(context.WithoutCancel(ctx), key, l.owner)
	l.forget(key)
	return err
}

func (l *leaser) forget(key string) {
	l.mu.Lock()
	delete(l.held, key)
	l.mu.Unlock()
}

// renew is one heartbeat: it renews every lease, tells the holders of
// those that were lost, and passes on the stop requests found on those
// held. Leases claimed after the heartbeat began are left out: its answer
// may predate them.
func (l *leaser) renew(ctx context.Context) error {
	l.mu.Lock()
	before := l.seq
	l.mu.Unlock()
	now := l.now()
	got, err := l.store.RenewLeases(ctx, l.owner, now, now.Add(l.ttl))
	if err != nil {
		return err
	}
	still := make(map[string]StopRequest, len(got))
	for _, h := range got {
		still[h.Key] = h.Stop
	}
	var lost []func()
	var stops []func()
	l.mu.Lock()
	for k, h := range l.held {
		if h.seq > before {
			continue
		}
		stop, ok := still[k]
		switch {
		case !ok:
			delete(l.held, k)
			lost = append(lost, h.onLost)
		case stop != StopNone:
			onStop := h.onStop
			stops = append(stops, func() { onStop(stop) })
		}
	}
	l.mu.Unlock()
	for _, f := range lost {
		f()
	}
	for _, f := range stops {
		f()
	}
	return nil
}

// loseAll treats every lease as lost (renewals kept failing past the
// lease time).
func (l *leaser) loseAll() {
	l.mu.Lock()
	var lost []func()
	for k, h := range l.held {
		delete(l.held, k)
		lost = append(lost, h.onLost)
	}
	l.mu.Unlock()
	for _, f := range lost {
		f()
	}
}
