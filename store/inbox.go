package store

import (
	"context"
	"time"
)

// Inbound is one inbound platform event in the durable inbox.
type Inbound struct {
	ID        int64
	Source    string
	ThreadKey string
	Kind      string
	Payload   []byte
	// DedupeKeys: an item whose key was recorded before is a duplicate.
	DedupeKeys []string
	Attempts   int
	CreatedAt  time.Time
}

// Finished is the outcome of working one inbox item: Err empty means done,
// else failed (kept for operators; a failed item is not retried).
type Finished struct {
	ID  int64
	Err string
}

// Inbox records inbound platform events before they are acknowledged, so an
// acknowledged event is never lost, and hands them out in order to be
// worked.
type Inbox interface {
	// RecordInbound stores items in one transaction (a group commit) and
	// reports, per item, whether it was a duplicate of an earlier one (or
	// of an earlier item of the same batch). Nothing is stored for
	// duplicates. Items are stamped with now.
	RecordInbound(ctx context.Context, now time.Time, items []Inbound) ([]bool, error)
	// PendingInbound returns up to limit pending items of source, oldest
	// first.
	PendingInbound(ctx context.Context, source string, limit int) ([]Inbound, error)
	// ClaimInbound claims for owner, until until, up to limit pending
	// items of source and returns them oldest first: the workers of
	// several replicas never work one item at once. An item another owner
	// claimed is skipped while that claim runs at now (after it, the item
	// is claimed again: its worker died). Items owner already claims are
	// returned again. A thread's items are worked in order: an item is
	// claimed only when every earlier pending item of its thread is
	// claimed by owner, in this call or an earlier one.
	ClaimInbound(ctx context.Context, source, owner string, now, until time.Time, limit int) ([]Inbound, error)
	// FinishInbound records the outcome of worked items in one transaction.
	FinishInbound(ctx context.Context, now time.Time, done []Finished) error
	// PruneInbound forgets dedupe keys and finished items older than
	// before; pending items stay. Keys must outlive the platform's retry
	// window (Slack: about 10 minutes).
	PruneInbound(ctx context.Context, before time.Time) error
}

// PendingClaim is the claim on one pending inbox item, as ClaimInbound
// implementations read it to keep each thread in order.
type PendingClaim struct {
	ID           int64
	ThreadKey    string
	ClaimedBy    string
	ClaimedUntil time.Time // zero: not claimed
}

// InThreadOrder returns the candidates (pending items free for owner, in
// id order) that owner may claim: those whose every earlier pending item
// of the same thread is a candidate taken too, or claimed by owner at now.
// pending holds the pending items of the candidates' threads up to the
// last candidate, in id order; an item in it that is neither (claimed by
// someone else, or held by another claim still being made) stops its
// thread there.
func InThreadOrder(candidates []Inbound, pending []PendingClaim, owner string, now time.Time) []Inbound {
	free := make(map[int64]bool, len(candidates))
	for _, c := range candidates {
		free[c.ID] = true
	}
	take := map[int64]bool{}
	blocked := map[string]bool{}
	for _, p := range pending {
		switch {
		case blocked[p.ThreadKey]:
		case free[p.ID]:
			take[p.ID] = true
		case p.ClaimedBy == owner && p.ClaimedUntil.After(now):
		default:
			blocked[p.ThreadKey] = true
		}
	}
	out := make([]Inbound, 0, len(take))
	for _, c := range candidates {
		if take[c.ID] {
			out = append(out, c)
		}
	}
	return out
}
