package store

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

var (
	runStatuses = map[string]bool{RunRunning: true, RunCompleted: true, RunFailed: true, RunInterrupted: true, RunSkipped: true}
	runTriggers = map[string]bool{TriggerCron: true, TriggerManual: true}
)

// Validate reports a run a store must refuse to write, with an error
// matching engine.ErrInvariant: it needs a schedule, a fire time, a known
// status and an updated time. op (the store's operation) prefixes the
// message.
func (r ScheduleRun) Validate(op string) error {
	switch {
	case r.Schedule == "":
		return invariant("%s: empty schedule", op)
	case r.FireTime.IsZero():
		return invariant("%s %s: zero fire time", op, r.Schedule)
	case !runStatuses[r.Status]:
		return invariant("%s %s: unknown status %q", op, r.Schedule, r.Status)
	case r.UpdatedAt.IsZero():
		return invariant("%s %s: zero updated time", op, r.Schedule)
	}
	return nil
}

// ValidateClaim is Validate for Runs.ClaimRun, which also stores the
// trigger: it must be known, or empty (TriggerCron).
func (r ScheduleRun) ValidateClaim() error {
	if err := r.Validate("claim run"); err != nil {
		return err
	}
	if r.Trigger != "" && !runTriggers[r.Trigger] {
		return invariant("claim run %s: unknown trigger %q", r.Schedule, r.Trigger)
	}
	return nil
}

// Runs records schedule runs. A run needs a schedule, a fire time, a known
// status and an updated time; anything else is engine.ErrInvariant.
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
