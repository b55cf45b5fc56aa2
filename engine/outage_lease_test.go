package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// refusingClaims are the store's leases whose first claims fail as a
// PostgreSQL restart makes them fail: the connection is refused.
type refusingClaims struct {
	engine.Leases
	refuse atomic.Int64 // claims still to refuse
	calls  atomic.Int64
}

func (r *refusingClaims) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	r.calls.Add(1)
	if r.refuse.Add(-1) >= 0 {
		return false, fmt.Errorf("claim: dial: %w", syscall.ECONNREFUSED)
	}
	return r.Leases.ClaimLease(ctx, key, owner, now, until)
}

// TestOutage_QueuedInputRunsOnceTheLeaseCanBeClaimed: input committed as
// the database went away found the session's lease unclaimable (connection
// refused); the claim failed, the runner retired, and only the next sweep
// for queued input (PollInterval, or never on one replica with a long one)
// ran it. The claim now waits the outage out as reads and commits do.
func TestOutage_QueuedInputRunsOnceTheLeaseCanBeClaimed(t *testing.T) {
	claims := &refusingClaims{}
	claims.refuse.Store(3)
	h := newHarness(t, func(c *engine.Config, _ *engine.Agent) {
		claims.Leases = c.Store.(engine.Leases)
		c.Leases, c.Replica, c.OutageGrace = claims, "r1", time.Minute
		// No sweep for queued input within the test: the claim itself
		// must wait the outage out.
		c.PollInterval = time.Hour
	})
	s := h.session()
	h.fake.Push(fakemodel.Text("Answered."))
	h.send(s.ID, "hello")
	_, evs := h.waitTurns(s.ID, 1)
	if n := count(evs, engine.EventTurnCompleted); n != 1 || claims.calls.Load() < 4 {
		t.Fatalf("%d turns after %d claims; want 1 after the 3 refused", n, claims.calls.Load())
	}
}
