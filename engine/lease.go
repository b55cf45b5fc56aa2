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
	// holds a lease on key that is still running at now.
	ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (claimed bool, err error)
	// RenewLeases moves to until every lease owner holds that is still
	// running at now, and returns their keys: a lease missing from them
	// was lost (it expired, and someone may have taken it).
	RenewLeases(ctx context.Context, owner string, now, until time.Time) (held []string, err error)
	// ReleaseLease drops owner's lease on key; releasing a lease not held
	// is not an error.
	ReleaseLease(ctx context.Context, key, owner string) error
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

func (m *memLeases) RenewLeases(_ context.Context, owner string, now, until time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var held []string
	for k, l := range m.leases {
		if l.owner == owner && l.until.After(now) {
			m.leases[k] = memLease{owner: owner, until: until}
			held = append(held, k)
		}
	}
	return held, nil
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

// claiming is the seq of a lease whose claim has not reached the store
// yet: no heartbeat can judge it (its answer may predate the claim).
const claiming = ^uint64(0)

type heldLease struct {
	seq    uint64
	onLost func()
}

// acquire claims key unless this engine already holds it; onLost (may be
// nil) is called if the heartbeat finds the lease lost. held is false
// when another owner (or another goroutine here) has it.
func (l *leaser) acquire(ctx context.Context, key string, onLost func()) (bool, error) {
	l.mu.Lock()
	if _, busy := l.held[key]; busy {
		l.mu.Unlock()
		return false, nil
	}
	if onLost == nil {
		onLost = func() {}
	}
	if l.held == nil {
		l.held = map[string]heldLease{}
	}
	l.held[key] = heldLease{seq: claiming, onLost: onLost}
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
	// Numbered once in the store, so a heartbeat that read the store
	// before the claim got there leaves it alone.
	l.mu.Lock()
	if h, ok := l.held[key]; ok {
		l.seq++
		h.seq = l.seq
		l.held[key] = h
	}
	l.mu.Unlock()
	return true, nil
}

// release drops key; a failure is only logged by the caller, since the
// lease expires on its own.
func (l *leaser) release(ctx context.Context, key string) error {
	l.forget(key)
	return l.store.ReleaseLease(context.WithoutCancel(ctx), key, l.owner)
}

func (l *leaser) forget(key string) {
	l.mu.Lock()
	delete(l.held, key)
	l.mu.Unlock()
}

// renew is one heartbeat: it renews every lease and tells the holders of
// those that were lost.
func (l *leaser) renew(ctx context.Context) error {
	l.mu.Lock()
	before := l.seq // leases claimed after this are not in the answer
	l.mu.Unlock()
	now := l.now()
	got, err := l.store.RenewLeases(ctx, l.owner, now, now.Add(l.ttl))
	if err != nil {
		return err
	}
	still := make(map[string]bool, len(got))
	for _, k := range got {
		still[k] = true
	}
	var lost []func()
	l.mu.Lock()
	for k, h := range l.held {
		if !still[k] && h.seq <= before {
			delete(l.held, k)
			lost = append(lost, h.onLost)
		}
	}
	l.mu.Unlock()
	for _, f := range lost {
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
