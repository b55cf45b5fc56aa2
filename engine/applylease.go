package engine

import (
	"context"
	"time"

	"brain/engine/lease"
	"brain/tools"
)

// holdApply claims the approval's apply lease; another holder means
// another request (on any replica) is deciding or applying it right now.
//
// An apply that just recorded its outcome (unconfirmed or failed) still
// holds the lease for a moment, until it lets go, and so does a decision
// being recorded on a pending approval: a retry or another person's
// approval waits for that, at most a lease's time (what a holder that died
// takes to expire).
func (e *Engine) holdApply(ctx context.Context, id string) error {
	deadline := time.Now().Add(e.leases.TTL)
	for {
		held, err := e.leases.Acquire(ctx, lease.ApplyKey(id), nil)
		if err != nil || held {
			return err
		}
		cur, err := e.store.Approval(ctx, id)
		if err != nil {
			return err
		}
		ended := cur.Status == ApprovalUnconfirmed || cur.Status == ApprovalFailed
		switch {
		case cur.Status != ApprovalPending && !ended:
			return alreadyDecided(cur)
		case time.Now().After(deadline):
			return Errorf(CodeConflict, "approval %s is being decided or applied by another request; try again", id)
		}
		// Still pending: another decision (one approval of several, say)
		// is being recorded and lets go as soon as it is; wait for it.
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (e *Engine) releaseApply(ctx context.Context, id string) {
	if err := e.leases.Release(ctx, lease.ApplyKey(id)); err != nil {
		e.log.Warn("release apply lease; it expires on its own", tools.LogApprovalID, id, tools.LogErr, err)
	}
}
