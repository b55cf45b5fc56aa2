package durable

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
	// FinishInbound records the outcome of worked items in one transaction.
	FinishInbound(ctx context.Context, now time.Time, done []Finished) error
	// PruneInbound forgets dedupe keys and finished items older than
	// before; pending items stay. Keys must outlive the platform's retry
	// window (Slack: about 10 minutes).
	PruneInbound(ctx context.Context, before time.Time) error
}
