package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"brain/store"
)

const runColumns = `schedule, fire_time, trigger, session_id, status, outcome, created_at, updated_at`

// ClaimRun records run unless a run with the same schedule and fire time
// exists; claimed tells which. The insert is one statement, so of two
// processes claiming the same fire time exactly one wins. An empty Trigger
// is cron; a zero CreatedAt is UpdatedAt.
func (s *Store) ClaimRun(ctx context.Context, run store.ScheduleRun) (bool, error) {
	if run.Trigger == "" {
		run.Trigger = store.TriggerCron
	}
	if run.CreatedAt.IsZero() {
		run.CreatedAt = run.UpdatedAt
	}
	if err := run.ValidateClaim(); err != nil {
		return false, err
	}
	res, err := s.write.ExecContext(ctx, `INSERT INTO schedule_runs (`+runColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (schedule, fire_time) DO NOTHING`,
		run.Schedule, formatTime(run.FireTime), run.Trigger, run.SessionID, run.Status, run.Outcome,
		formatTime(run.CreatedAt), formatTime(run.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("claim run %s %s: %w", run.Schedule, formatTime(run.FireTime), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim run %s %s: %w", run.Schedule, formatTime(run.FireTime), err)
	}
	return n == 1, nil
}

// UpdateRun stores the run's session id, status, outcome and updated time.
// A run that was never claimed is not found.
func (s *Store) UpdateRun(ctx context.Context, run store.ScheduleRun) error {
	n, err := s.updateRun(ctx, "update run", run, "")
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound("schedule run", run.Schedule+" "+formatTime(run.FireTime))
	}
	return nil
}

// FinishRun is UpdateRun for a run that is still running: finished is false
// (and nothing is written) when the run already ended, so of two watchers of
// one run only one records, and posts, its outcome.
func (s *Store) FinishRun(ctx context.Context, run store.ScheduleRun) (finished bool, err error) {
	n, err := s.updateRun(ctx, "finish run", run, store.RunRunning)
	if err != nil {
		return false, err
	}
	if n == 0 {
		if _, err := s.run(ctx, run.Schedule, run.FireTime); err != nil {
			return false, err // not found
		}
	}
	return n == 1, nil
}

func (s *Store) updateRun(ctx context.Context, op string, run store.ScheduleRun, from string) (int64, error) {
	if err := run.Validate(op); err != nil {
		return 0, err
	}
	q := `UPDATE schedule_runs SET session_id = ?, status = ?, outcome = ?, updated_at = ?
		WHERE schedule = ? AND fire_time = ?`
	args := []any{run.SessionID, run.Status, run.Outcome, formatTime(run.UpdatedAt), run.Schedule, formatTime(run.FireTime)}
	if from != "" {
		q += ` AND status = ?`
		args = append(args, from)
	}
	res, err := s.write.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("%s %s %s: %w", op, run.Schedule, formatTime(run.FireTime), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s %s %s: %w", op, run.Schedule, formatTime(run.FireTime), err)
	}
	return n, nil
}

// Runs returns up to limit runs of a schedule, newest fire time first;
// limit <= 0 means all.
func (s *Store) Runs(ctx context.Context, schedule string, limit int) ([]store.ScheduleRun, error) {
	q := `SELECT ` + runColumns + ` FROM schedule_runs WHERE schedule = ? ORDER BY fire_time DESC`
	args := []any{schedule}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	out, err := s.queryRuns(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", schedule, err)
	}
	return out, nil
}

// LastRun returns the schedule's run with the newest fire time, or an error
// matching engine.ErrNotFound when it never ran.
func (s *Store) LastRun(ctx context.Context, schedule string) (store.ScheduleRun, error) {
	runs, err := s.Runs(ctx, schedule, 1)
	if err != nil {
		return store.ScheduleRun{}, err
	}
	if len(runs) == 0 {
		return store.ScheduleRun{}, notFound("run of schedule", schedule)
	}
	return runs[0], nil
}

// RunningRuns returns the runs still running, oldest fire time first, of
// one schedule or, with schedule "", of all.
func (s *Store) RunningRuns(ctx context.Context, schedule string) ([]store.ScheduleRun, error) {
	q := `SELECT ` + runColumns + ` FROM schedule_runs WHERE status = 'running'`
	var args []any
	if schedule != "" {
		q += ` AND schedule = ?`
		args = append(args, schedule)
	}
	out, err := s.queryRuns(ctx, q+` ORDER BY fire_time, schedule`, args...)
	if err != nil {
		return nil, fmt.Errorf("list running runs: %w", err)
	}
	return out, nil
}

// run returns one run by its key.
func (s *Store) run(ctx context.Context, schedule string, fire time.Time) (store.ScheduleRun, error) {
	out, err := s.queryRuns(ctx, `SELECT `+runColumns+` FROM schedule_runs WHERE schedule = ? AND fire_time = ?`,
		schedule, formatTime(fire))
	if err != nil {
		return store.ScheduleRun{}, fmt.Errorf("get run %s %s: %w", schedule, formatTime(fire), err)
	}
	if len(out) == 0 {
		return store.ScheduleRun{}, notFound("schedule run", schedule+" "+formatTime(fire))
	}
	return out[0], nil
}

func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]store.ScheduleRun, error) {
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ScheduleRun
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRun(rows *sql.Rows) (store.ScheduleRun, error) {
	var (
		r                      store.ScheduleRun
		fire, created, updated string
	)
	if err := rows.Scan(&r.Schedule, &fire, &r.Trigger, &r.SessionID, &r.Status, &r.Outcome, &created, &updated); err != nil {
		return store.ScheduleRun{}, err
	}
	var errs []error
	var err error
	r.FireTime, err = parseTime(fire)
	errs = append(errs, err)
	r.CreatedAt, err = parseTime(created)
	errs = append(errs, err)
	r.UpdatedAt, err = parseTime(updated)
	errs = append(errs, err)
	return r, errors.Join(errs...)
}
