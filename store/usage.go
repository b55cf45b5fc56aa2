package store

import (
	"context"
	"time"

	"brain/engine"
)

// UsageRow is the usage of the turns that ended on one day (UTC,
// "2006-01-02") in sessions of one agent, person (who started them) and
// origin.
type UsageRow struct {
	Day    string
	Agent  string
	Person string
	Origin engine.Origin
	Turns  int64
	Usage  engine.Usage
}

// UsageReport sums the usage the turns recorded (turn.completed), by the
// database.
type UsageReport interface {
	// Usage returns the rows of the turns that ended in [since, until),
	// ordered by day, agent, person and origin.
	Usage(ctx context.Context, since, until time.Time) ([]UsageRow, error)
}
