package lease

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// slowClaims are leases whose claims wait for a signal before they reach
// the store, as a claim does on a busy database.
type slowClaims struct {
	Memory
	entered, proceed chan struct{}
}

func (s *slowClaims) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	s.entered <- struct{}{}
	<-s.proceed
	return s.Memory.ClaimLease(ctx, key, owner, now, until)
}

// A heartbeat that runs while a claim is on its way to the store does not
// find the claim's lease in the store's answer: that lease is not lost.
func TestLeaser_HeartbeatDuringAClaimLosesNothing(t *testing.T) {
	st := &slowClaims{entered: make(chan struct{}), proceed: make(chan struct{})}
	l := &Holder{Store: st, Owner: "rep_a", TTL: time.Minute, Now: time.Now}
	var lost atomic.Bool
	done := make(chan bool)
	go func() {
		held, err := l.Acquire(context.Background(), "session:ses_1", func() { lost.Store(true) })
		if err != nil {
			t.Error(err)
		}
		done <- held
	}()
	<-st.entered
	if err := l.Renew(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(st.proceed)
	if !<-done {
		t.Fatal("the claim was not granted")
	}
	if lost.Load() {
		t.Fatal("the heartbeat during the claim reported the lease lost")
	}
	// The next heartbeat sees it, and keeps it.
	if err := l.Renew(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	_, ok := l.held["session:ses_1"]
	l.mu.Unlock()
	if !ok || lost.Load() {
		t.Fatal("the lease was dropped by the next heartbeat")
	}
}
