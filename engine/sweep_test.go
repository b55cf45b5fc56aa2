package engine

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"brain/engine/lease"
)

// sweepStore answers the sweeps' reads; the Store methods they must not
// call are left nil and panic.
type sweepStore struct {
	Store
	sessions []Session
}

func (s *sweepStore) Sessions(_ context.Context, f SessionFilter) ([]Session, error) {
	var out []Session
	for _, x := range s.sessions {
		for _, st := range f.Statuses {
			if x.Status == st {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

func (s *sweepStore) Session(_ context.Context, id string) (Session, error) {
	for _, x := range s.sessions {
		if x.ID == id {
			x.Status = StatusIdle // the turn ended before the claim
			return x, nil
		}
	}
	return Session{}, ErrNotFound
}

func (s *sweepStore) Events(context.Context, string, int64, int) ([]Event, error) { return nil, nil }

// claimLog records which leases were claimed.
type claimLog struct {
	lease.Memory
	mu      sync.Mutex
	claimed []string
}

func (c *claimLog) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	c.mu.Lock()
	c.claimed = append(c.claimed, key)
	c.mu.Unlock()
	return c.Memory.ClaimLease(ctx, key, owner, now, until)
}

// sweepEngine is an engine sharing its store whose workers never get a
// slot, so kicked sessions stay queued for the test to see.
func sweepEngine(t *testing.T, st Store, leases Leases, now time.Time) *Engine {
	e := &Engine{
		store:   st,
		log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		runners: map[string]*runner{},
		stopCh:  make(chan struct{}),
		base:    context.Background(),
		leases:  &lease.Holder{Store: leases, Owner: "rep_test", TTL: 30 * time.Second, Now: func() time.Time { return now }},
	}
	t.Cleanup(func() {
		e.mu.Lock()
		e.stopping = true
		close(e.stopCh)
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

func TestKickPending_LeavesFreshInputAndSessionsQueuedHere(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := &sweepStore{sessions: []Session{
		{ID: "sess_left", Status: StatusIdle, UpdatedAt: now.Add(-time.Minute)},
		{ID: "sess_fresh", Status: StatusIdle, UpdatedAt: now.Add(-10 * time.Second)},
		{ID: "sess_queued", Status: StatusAwaitingInput, UpdatedAt: now.Add(-time.Minute)},
	}}
	e := sweepEngine(t, st, &lease.Memory{}, now)
	queued := &runner{active: true}
	e.runners["sess_queued"] = queued

	if err := e.kickPending(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.runners["sess_left"]; r == nil || !r.pending {
		t.Errorf("input older than a lease time was not kicked: %+v", r)
	}
	if r := e.runners["sess_fresh"]; r != nil {
		t.Errorf("input recorded within a lease time was kicked (its recorder runs it): %+v", r)
	}
	if queued.pending || e.waiting != 1 {
		t.Errorf("a session queued here was kicked again: pending %v, waiting %d", queued.pending, e.waiting)
	}
}

func TestSweepRecover_ClaimsOnlySessionsUnchangedForALeaseTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := &sweepStore{sessions: []Session{
		{ID: "sess_stale", Status: StatusRunning, UpdatedAt: now.Add(-time.Minute)},
		{ID: "sess_live", Status: StatusRunning, UpdatedAt: now.Add(-time.Second)},
	}}
	leases := &claimLog{}
	e := sweepEngine(t, st, leases, now)

	if err := e.recover(context.Background(), now.Add(-e.leases.TTL)); err != nil {
		t.Fatal(err)
	}
	if got := leases.claimed; len(got) != 1 || got[0] != lease.SessionKey("sess_stale") {
		t.Errorf("claimed %v, want only the lease of sess_stale", got)
	}
	// At start-up (no cutoff) every running session is tried.
	leases.claimed = nil
	if err := e.recover(context.Background(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := leases.claimed; len(got) != 2 {
		t.Errorf("claimed %v at start-up, want both sessions' leases", got)
	}
}
