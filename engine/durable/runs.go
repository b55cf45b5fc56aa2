package durable

import (
	"context"
	"time"
)

// Schedule run statuses. A run is running from its claim until its
// session's turn ends; skipped records an occurrence that overlap: skip did
// not run.
const (
	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
	RunSkipped     = "skipped"
)

// Schedule run triggers: the cron expression, or a person asking to run now.
const (
	TriggerCron   = "cron"
	TriggerManual = "manual"
)

// ScheduleRun is one occurrence of a schedule. Schedule and FireTime are its
// key: a fire time is claimed once, whichever process gets there first.
type ScheduleRun struct {
	Schedule  string
	FireTime  time.Time
	Trigger   string
	SessionID string
	Status    string
	Outcome   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Runs records schedule runs. A run needs a schedule, a fire time, a known
// status and an updated time; anything else is engine.ErrInvalid.
type Runs interface {
	// ClaimRun records run unless a run with the same schedule and fire
	// time exists; claimed tells which. Of two processes claiming the same
	// fire time exactly one wins, and the loser changes nothing. An empty
	// Trigger is TriggerCron; a zero CreatedAt is UpdatedAt.
	ClaimRun(ctx context.Context, run ScheduleRun) (claimed bool, err error)
	// UpdateRun stores the run's session id, status, outcome and updated
	// time. A run that was never claimed is engine.ErrNotFound.
	UpdateRun(ctx context.Context, run ScheduleRun) error
	// FinishRun is UpdateRun for a run that is still running: finished is
	// false (and nothing is written) when the run already ended, so of two
	// watchers of one run only one records, and posts, its outcome.
	FinishRun(ctx context.Context, run ScheduleRun) (finished bool, err error)
	// Runs returns up to limit runs of a schedule, newest fire time first;
	// limit <= 0 means all.
	Runs(ctx context.Context, schedule string, limit int) ([]ScheduleRun, error)
	// LastRun returns the schedule's run with the newest fire time, or an
	// error matching engine.ErrNotFound when it never ran.
	LastRun(ctx context.Context, schedule string) (ScheduleRun, error)
	// RunningRuns returns the runs still running, oldest fire time first
	// (then by schedule), of one schedule or, with schedule "", of all.
	RunningRuns(ctx context.Context, schedule string) ([]ScheduleRun, error)
}
