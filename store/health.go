package store

import (
	"context"
	"time"
)

// InboxBacklog is the pending part of one source's inbox.
type InboxBacklog struct {
	Source string
	Depth  int64
	// Oldest is when the oldest pending item was recorded (zero when none).
	Oldest time.Time
}

// Health is what readiness and metrics read from a store.
type Health interface {
	// CheckWritable commits a write that leaves nothing behind, so a
	// database that cannot take writes shows up before a turn needs it.
	CheckWritable(ctx context.Context, now time.Time) error
	// InboxBacklogs reports the pending inbox items per source, by source.
	InboxBacklogs(ctx context.Context) ([]InboxBacklog, error)
}
