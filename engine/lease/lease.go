package lease

import (
	"context"
	"errors"
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
type Store interface {
	// ClaimLease takes the lease on key for owner until until, or renews
	// owner's own; claimed is false (nothing written) when another owner
	// holds a lease on key that is still running at now. A claim clears
	// the lease's stop request: it asked the work claimed before to stop.
	ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (claimed bool, err error)
	// RenewLeases moves to until every lease owner holds that is still
	// running at now, and returns them with their stop requests: a lease
	// missing from them was lost (it expired, and someone may have taken
	// it).
	RenewLeases(ctx context.Context, owner string, now, until time.Time) (held []Held, err error)
	// ReleaseLease drops owner's lease on key; releasing a lease not held
	// is not an error.
	ReleaseLease(ctx context.Context, key, owner string) error
	// RequestStop records on the lease on key, whoever holds it, that its
	// work should stop (a session's turn, cancelled or interrupted); the
	// holder learns of it on its next renewal. A cancel is not downgraded
	// to an interrupt by a later request. Without a lease on key it does
	// nothing.
	RequestStop(ctx context.Context, key string, stop Stop) error
}

// Held is a lease RenewLeases renewed, and what was asked of its
// holder.
type Held struct {
	Key  string
	Stop Stop
}

// Stop is what another replica asked of a lease's holder: stop the
// session's turn, as cancelled or as interrupted by new input. It is kept
// on the lease, so a holder that missed the fast notice (Peers) still
// learns of it on its heartbeat.
type Stop string

// Stop requests; StopNone is none.
const (
	StopNone      Stop = ""
	StopCancel    Stop = "cancel"
	StopInterrupt Stop = "interrupt"
)

// ErrUnknownStop is a stop request that is not StopCancel or
// StopInterrupt: a caller broke the contract.
var ErrUnknownStop = errors.New("unknown stop request")

// Valid reports whether r is a request a store may record.
func (r Stop) Valid() bool { return r == StopCancel || r == StopInterrupt }

// Merge is the request that stands after r when next arrives: a cancel
// is never turned into an interrupt.
func (r Stop) Merge(next Stop) Stop {
	if r == StopCancel {
		return r
	}
	return next
}

// Lease keys: the one place each kind is built.

// SessionKey is the lease on a session's turn.
func SessionKey(id string) string { return "session:" + id }

// ApplyKey is the lease on an approval's apply.
func ApplyKey(id string) string { return "apply:" + id }

// DeliveryKey is the lease on delivering a session to a platform (its
// origin, e.g. "slack").
func DeliveryKey(platform, sessionID string) string {
	return "deliver:" + platform + ":" + sessionID
}

// Memory is the Store of an engine that is alone on its store (an
// embedded engine, tests, SQLite under its file lock): the same claims,
// kept in memory, since no other process can contend for them.
type Memory struct {
	mu     sync.Mutex
	leases map[string]memLease
}

type memLease struct {
	owner string
	until time.Time
	stop  Stop
}

func (m *Memory) ClaimLease(_ context.Context, key, owner string, now, until time.Time) (bool, error) {
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

func (m *Memory) RenewLeases(_ context.Context, owner string, now, until time.Time) ([]Held, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var held []Held
	for k, l := range m.leases {
		if l.owner == owner && l.until.After(now) {
			l.until = until
			m.leases[k] = l
			held = append(held, Held{Key: k, Stop: l.stop})
		}
	}
	return held, nil
}

func (m *Memory) RequestStop(_ context.Context, key string, stop Stop) error {
	if !stop.Valid() {
		return fmt.Errorf("request stop on lease %s: %w %q", key, ErrUnknownStop, stop)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok {
		l.stop = l.stop.Merge(stop)
		m.leases[key] = l
	}
	return nil
}

func (m *Memory) ReleaseLease(_ context.Context, key, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok && l.owner == owner {
		delete(m.leases, key)
	}
	return nil
}

// Holder holds this engine's leases: it claims them in the store, renews
// them on a heartbeat and remembers which it holds, so that two of the
// engine's own goroutines never share one (the store sees one owner).
type Holder struct {
	Store Store
	Owner string
	TTL   time.Duration
	Now   func() time.Time
	// Exclusive: no other engine shares the store, so a lease another
	// owner left is an earlier process's, dead by definition.
	Exclusive bool

	mu   sync.Mutex
	held map[string]heldLease
	seq  uint64 // counts acquisitions, so a heartbeat can tell newer ones
}

type heldLease struct {
	// seq is when the claim was made (claimed: the store answered), so a
	// heartbeat answered before it is not taken as news of this claim.
	seq    uint64
	onLost func()
	onStop func(Stop)
}

// unclaimed is the seq of a lease still being claimed: no heartbeat
// speaks of it yet.
const unclaimed = ^uint64(0)

// Acquire claims key unless this engine already holds it; onLost (may be
// nil) is called if the heartbeat finds the lease lost. held is false
// when another owner (or another goroutine here) has it.
func (l *Holder) Acquire(ctx context.Context, key string, onLost func()) (bool, error) {
	return l.AcquireStoppable(ctx, key, onLost, nil)
}

// AcquireStoppable is Acquire for work another replica may ask to stop:
// onStop (may be nil) is called with each stop request a heartbeat finds
// on the lease.
func (l *Holder) AcquireStoppable(ctx context.Context, key string, onLost func(), onStop func(Stop)) (bool, error) {
	l.mu.Lock()
	if _, busy := l.held[key]; busy {
		l.mu.Unlock()
		return false, nil
	}
	if onLost == nil {
		onLost = func() {}
	}
	if onStop == nil {
		onStop = func(Stop) {}
	}
	if l.held == nil {
		l.held = map[string]heldLease{}
	}
	l.held[key] = heldLease{seq: unclaimed, onLost: onLost, onStop: onStop}
	l.mu.Unlock()
	now := l.Now()
	until := now.Add(l.TTL)
	asOf := now
	if l.Exclusive {
		asOf = until
	}
	ok, err := l.Store.ClaimLease(ctx, key, l.Owner, asOf, until)
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

// Holds reports whether this engine holds key (or is claiming it).
func (l *Holder) Holds(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[key]
	return ok
}

// Release drops key; a failure is only logged by the caller, since the
// lease expires on its own.
//
// The key stays taken here until the store has dropped it: another
// goroutine here that claimed it in between would renew the row this
// release then deletes, and write under a lease nobody holds (its commits
// fenced).
func (l *Holder) Release(ctx context.Context, key string) error {
	err := l.Store.ReleaseLease(context.WithoutCancel(ctx), key, l.Owner)
	l.forget(key)
	return err
}

func (l *Holder) forget(key string) {
	l.mu.Lock()
	delete(l.held, key)
	l.mu.Unlock()
}

// Renew is one heartbeat: it renews every lease, tells the holders of
// those that were lost, and passes on the stop requests found on those
// held. Leases claimed after the heartbeat began are left out: its answer
// may predate them.
func (l *Holder) Renew(ctx context.Context) error {
	l.mu.Lock()
	before := l.seq
	l.mu.Unlock()
	now := l.Now()
	got, err := l.Store.RenewLeases(ctx, l.Owner, now, now.Add(l.TTL))
	if err != nil {
		return err
	}
	still := make(map[string]Stop, len(got))
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

// LoseAll treats every lease as lost (renewals kept failing past the
// lease time).
func (l *Holder) LoseAll() {
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
