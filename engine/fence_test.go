package engine

import (
	"context"
	"errors"
	"testing"

	"brain/engine/lease"
)

// An engine alone on its store fences nothing: its leases are in memory,
// with no row for a store to check.
func TestFence_OnlyWhenTheStoreIsShared(t *testing.T) {
	alone := &Engine{leases: &lease.Holder{Store: &lease.Memory{}, Owner: "r1", Exclusive: true}}
	if f := alone.fence("session:s1"); f != nil {
		t.Fatalf("exclusive engine fence = %+v, want none", f)
	}
	ctx := alone.withFence(context.Background(), "session:s1", nil)
	c := Commit{SessionID: "s1"}
	if fenceCommit(ctx, &c); c.Fence != nil {
		t.Fatalf("exclusive engine commit fenced by %+v", c.Fence)
	}
	shared := &Engine{leases: &lease.Holder{Store: &lease.Memory{}, Owner: "r1"}}
	stopped := false
	ctx = shared.withFence(context.Background(), "session:s1", func() { stopped = true })
	c = Commit{SessionID: "s1"}
	f := fenceCommit(context.WithoutCancel(ctx), &c) // writes outlive the turn's cancel
	if c.Fence == nil || *c.Fence != (Fence{Key: "session:s1", Owner: "r1"}) {
		t.Fatalf("shared engine commit fence = %+v", c.Fence)
	}
	fenced(f, errors.New("disk full"))
	if stopped {
		t.Fatal("an error other than ErrFenced stopped the turn")
	}
	fenced(f, Fence{Key: "session:s1", Owner: "r1"}.Refused("commit session s1", "r2"))
	if !stopped {
		t.Fatal("a fenced commit did not stop the turn")
	}
	own := &Fence{Key: "apply:a1", Owner: "r1"}
	c = Commit{SessionID: "s1", Fence: own}
	if fenceCommit(ctx, &c); c.Fence != own {
		t.Fatal("a commit's own fence was replaced by the turn's")
	}
}
