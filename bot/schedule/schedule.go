// Package schedule runs the configured schedules: it computes each cron
// expression's fire times in the schedule's zone (across DST changes),
// claims every fire time in the database so it runs once across restarts
// and processes, starts a non-interactive session per run, watches it to
// its end, and records and posts the outcome.
//
// It works on the small Engine interface it declares, on store.Runs for
// the run records and on bot/config's schedule types; it never imports the
// bot that wires it, the HTTP API, a store, a channel or a webhook
// (bot/layering_test.go checks it).
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"brain/bot/config"
	"brain/engine"
	"brain/store"
	"brain/tools"

	"brain/internal/startstop"
)

const (
	// catchUpWindow bounds what a start-up catches up: the most recent
	// occurrence missed while brain was down runs once if it is this recent.
	catchUpWindow = 24 * time.Hour
	// maxSleep bounds the loop's sleep so a wall-clock jump or a suspended
	// machine delays a fire by at most this much.
	maxSleep = time.Minute
	// retryDelay spaces Ticks after one failed (a claim that could not be
	// written is tried again), so a broken database is not hammered.
	retryDelay = 5 * time.Second
	// lastRunsShown is how many runs GET /v1/schedules shows per schedule.
	lastRunsShown = 5
)

// OutcomePoster posts the outcome of a schedule run to the schedule's
// post_to target. It is called once per finished run (not for skipped
// occurrences) when post_to has a target; an implementation ignores the
// targets it does not serve. Errors are logged, not retried.
type OutcomePoster interface {
	PostScheduleOutcome(ctx context.Context, s config.ScheduleConfig, run Run, outcome string) error
}

// Engine is what the scheduler asks of the engine; *engine.Engine has it.
type Engine interface {
	engine.Starter
	engine.SessionReader
	engine.Log
	engine.Changes
}

var _ Engine = (*engine.Engine)(nil)

// Run is one occurrence of a schedule: its fire time (in the
// schedule's zone), what triggered it, the session it started and how it
// ended. Status is running, completed, failed, interrupted or skipped.
type Run struct {
	Schedule  string    `json:"schedule"`
	FireTime  time.Time `json:"fire_time"`
	Trigger   string    `json:"trigger"` // cron | manual
	SessionID string    `json:"session_id,omitempty"`
	Status    string    `json:"status"`
	Outcome   string    `json:"outcome,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func viewRun(r store.ScheduleRun, loc *time.Location) Run {
	if loc == nil {
		loc = time.UTC
	}
	return Run{
		Schedule: r.Schedule, FireTime: r.FireTime.In(loc), Trigger: r.Trigger, SessionID: r.SessionID,
		Status: r.Status, Outcome: r.Outcome, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// Scheduler starts a non-interactive session for each occurrence of the
// configured schedules. Each fire time is claimed in the database first, so
// it runs once even across restarts or two processes on one database.
// A background loop calls Tick at the next fire time; tests call Tick
// themselves with their own clock.
type Scheduler struct {
	engine Engine
	store  store.Runs
	log    *slog.Logger
	clock  func() time.Time

	// mu serializes Tick, RunNow, Start and Stop, so an overlap check and
	// the claim that follows it see the same runs.
	mu      sync.Mutex
	entries []*scheduleEntry
	byName  map[string]*scheduleEntry
	started bool
	stopped bool

	// life runs the loop and the watchers, ends their context at Stop and
	// waits for them.
	life startstop.Lifecycle

	posterMu sync.Mutex
	poster   OutcomePoster

	watching watched
}

// scheduleEntry is one configured schedule, parsed.
type scheduleEntry struct {
	cfg   config.ScheduleConfig
	loc   *time.Location
	sched cron.Schedule
	// spec matches cron fields against the local wall clock (its Location
	// is UTC and it is given wall times); nil for @every, which counts
	// elapsed time.
	spec *cron.SpecSchedule
	// last is the time up to which occurrences have been handled.
	last time.Time
}

// parseSchedules parses every configured schedule, enabled or not.
func parseSchedules(cfg *config.Config) ([]*scheduleEntry, error) {
	var out []*scheduleEntry
	for i, sc := range cfg.Schedules {
		loc, err := time.LoadLocation(sc.Timezone)
		if err != nil {
			return nil, fmt.Errorf("schedules[%d].timezone: %w", i, err)
		}
		sched, err := cron.ParseStandard(sc.Cron)
		if err != nil {
			return nil, fmt.Errorf("schedules[%d].cron: %q: %w", i, sc.Cron, err)
		}
		e := &scheduleEntry{cfg: sc, loc: loc, sched: sched}
		if spec, ok := sched.(*cron.SpecSchedule); ok {
			wall := *spec
			wall.Location = time.UTC
			e.spec = &wall
		}
		out = append(out, e)
	}
	return out, nil
}

// New parses the configured schedules (enabled or not) and builds their
// scheduler; it starts nothing. Start begins firing them.
func New(cfg *config.Config, eng Engine, store store.Runs, log *slog.Logger, clock func() time.Time) (*Scheduler, error) {
	entries, err := parseSchedules(cfg)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{engine: eng, store: store, log: log, clock: clock, entries: entries, byName: map[string]*scheduleEntry{}}
	for _, e := range entries {
		s.byName[e.cfg.Name] = e
	}
	return s, nil
}

// SetOutcomePoster sets what posts run outcomes to post_to targets. Set it
// before Start so runs picked up at start-up post too.
func (s *Scheduler) SetOutcomePoster(p OutcomePoster) {
	s.posterMu.Lock()
	defer s.posterMu.Unlock()
	s.poster = p
}

func (s *Scheduler) outcomePoster() OutcomePoster {
	s.posterMu.Lock()
	defer s.posterMu.Unlock()
	return s.poster
}

// Start picks up runs a previous process left running (it watches their
// sessions, starting them if they never started), decides where each
// schedule's first Tick starts from, and starts the loop. Safe to call twice.
//
// A schedule's first Tick looks back to its last recorded run, but at most
// catchUpWindow: so the most recent occurrence missed while brain was down
// runs once, and older ones are dropped. A schedule that never ran starts
// from now.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.stopped {
		return nil
	}
	s.started = true
	return s.life.Start(ctx, s.begin)
}

// begin is Start's work, with s.mu held.
func (s *Scheduler) begin(ctx context.Context) error {
	now := s.clock()
	for _, e := range s.entries {
		e.last = now
		last, err := s.store.LastRun(ctx, e.cfg.Name)
		switch {
		case errors.Is(err, engine.ErrNotFound):
		case err != nil:
			return fmt.Errorf("start schedules: %w", err)
		case last.FireTime.Before(now):
			e.last = later(last.FireTime, now.Add(-catchUpWindow))
		}
		if e.cfg.IsEnabled() && (e.cfg.PostTo != config.PostToConfig{}) && s.outcomePoster() == nil {
			s.log.Warn("schedule has post_to but nothing in this build posts outcomes there; runs are recorded only", tools.LogSchedule, e.cfg.Name)
		}
	}
	if err := s.pickUp(ctx); err != nil {
		return fmt.Errorf("start schedules: %w", err)
	}
	s.life.Go(s.loop)
	s.life.Go(s.adoptLoop)
	return nil
}

// Stop ends the loop and the watchers and waits for them, or until ctx is
// done. Runs still running stay so in the database; the next Start watches
// them again. Safe to call twice, concurrently, and before Start; a
// Scheduler once stopped does not start again.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true // under mu: no watcher starts after this
	s.mu.Unlock()
	if err := s.life.Stop(ctx, nil); err != nil {
		return fmt.Errorf("stop schedules: %w", err)
	}
	return nil
}

// loop calls Tick when the next occurrence is due (checking at least every
// maxSleep) until Stop.
func (s *Scheduler) loop(ctx context.Context) {
	var failed bool
	for {
		wait := s.untilNext(s.clock())
		if failed {
			wait = max(wait, retryDelay)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		err := s.Tick(ctx, s.clock())
		if failed = err != nil; failed && ctx.Err() == nil {
			s.log.Error("schedule tick", tools.LogErr, err)
		}
	}
}

// untilNext is how long the loop sleeps: until the next occurrence of any
// enabled schedule, at most maxSleep.
func (s *Scheduler) untilNext(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := maxSleep
	for _, e := range s.entries {
		if !e.cfg.IsEnabled() {
			continue
		}
		if next := e.next(e.last); !next.IsZero() {
			d = min(d, max(next.Sub(now), 0))
		}
	}
	return d
}

// Tick fires every enabled schedule that has an occurrence in (its last
// tick, now]: when several passed (a suspended machine, a long tick), only
// the most recent runs. Errors of one schedule do not stop the others; an
// occurrence whose claim failed is tried again at the next Tick.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.stopped {
		return errors.New("schedule tick: the scheduler is not running")
	}
	var errs []error
	for _, e := range s.entries {
		if !e.cfg.IsEnabled() || !now.After(e.last) {
			continue
		}
		at, n := e.due(e.last, now)
		if at.IsZero() {
			e.last = now
			continue
		}
		if n > 1 {
			s.log.Warn("schedule occurrences were missed; only the most recent runs", tools.LogSchedule, e.cfg.Name, tools.LogMissed, n-1)
		}
		if _, err := s.fire(ctx, e, at, store.TriggerCron); err != nil && !errors.Is(err, engine.ErrConflict) {
			errs = append(errs, fmt.Errorf("schedule %s at %s: %w", e.cfg.Name, at.In(e.loc).Format(time.RFC3339), err))
			continue // e.last stays: the next Tick tries again
		}
		e.last = now
	}
	return errors.Join(errs...)
}

// RunNow runs a schedule at once, enabled or not, with fire time now. With
// overlap skip, a run still in progress makes it fail with a conflict.
func (s *Scheduler) RunNow(ctx context.Context, name string) (Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byName[name]
	if !ok {
		return Run{}, engine.Errorf(engine.CodeNotFound, "no schedule named %q", name)
	}
	if !s.started || s.stopped {
		return Run{}, engine.Errorf(engine.CodeOverloaded, "brain is starting or shutting down; retry shortly")
	}
	return s.fire(ctx, e, s.clock(), store.TriggerManual)
}

// fire claims the occurrence at and starts its session. With overlap skip
// and a run in progress, a cron occurrence is recorded as skipped and a
// manual one is refused. A fire time claimed before is a conflict.
// Called with s.mu held.
func (s *Scheduler) fire(ctx context.Context, e *scheduleEntry, at time.Time, trigger string) (Run, error) {
	now := s.clock()
	run := store.ScheduleRun{Schedule: e.cfg.Name, FireTime: at, Trigger: trigger, Status: store.RunRunning, CreatedAt: now, UpdatedAt: now}
	if e.cfg.Overlap != "allow" {
		busy, err := s.activeRun(ctx, e.cfg.Name)
		if err != nil {
			return Run{}, err
		}
		if busy != nil {
			what := fmt.Sprintf("the run for %s (session %s) is still in progress", busy.FireTime.In(e.loc).Format(time.RFC3339), orNone(busy.SessionID))
			if trigger == store.TriggerManual {
				return Run{}, engine.Errorf(engine.CodeConflict, "schedule %q has overlap: skip and %s; wait for it to finish", e.cfg.Name, what)
			}
			run.Status, run.Outcome = store.RunSkipped, "skipped: "+what
		}
	}
	claimed, err := s.store.ClaimRun(ctx, run)
	if err != nil {
		return Run{}, err
	}
	if !claimed {
		return Run{}, engine.Errorf(engine.CodeConflict, "the run of schedule %q for %s was already claimed", e.cfg.Name, at.In(e.loc).Format(time.RFC3339Nano))
	}
	log := s.log.With(tools.LogSchedule, e.cfg.Name, tools.LogFireTime, at.In(e.loc).Format(time.RFC3339))
	if run.Status == store.RunSkipped {
		log.Info("schedule occurrence skipped: the previous run is still in progress")
		return viewRun(run, e.loc), nil
	}
	run = s.start(ctx, e, run)
	log.Info("schedule run started", tools.LogSession, run.SessionID, tools.LogTrigger, trigger, tools.LogRunState, run.Status)
	return viewRun(run, e.loc), nil
}

// start creates the run's session and sends its input, both idempotent on
// the run's key, then watches it. A failure that is not shutdown ends the
// run as failed; on shutdown the run stays running for the next Start.
// Called with s.mu held.
func (s *Scheduler) start(ctx context.Context, e *scheduleEntry, run store.ScheduleRun) store.ScheduleRun {
	key := runKey(run)
	sess, _, err := s.engine.CreateSession(ctx, engine.NewSession{
		Agent: e.cfg.Agent, Origin: engine.OriginSchedule, StartedBy: e.cfg.Name,
		Interactive: false, IdempotencyKey: key,
	})
	if err == nil && run.SessionID != sess.ID {
		run.SessionID, run.UpdatedAt = sess.ID, s.clock()
		err = s.store.UpdateRun(ctx, run)
	}
	var input engine.Event
	if err == nil {
		input, _, err = s.engine.Send(ctx, sess.ID, engine.Input{Text: runInput(e, run), Author: e.cfg.Name, IdempotencyKey: key})
	}
	if err != nil {
		if s.stopped || ctx.Err() != nil {
			return run
		}
		msg := engine.ErrorMessage(err)
		if engine.CodeOf(err) == engine.CodeInternal {
			s.log.Error("start schedule run", tools.LogSchedule, e.cfg.Name, tools.LogErr, err)
			msg = "internal error (see the brain log)"
		}
		return s.finish(ctx, e.cfg, run, store.RunFailed, "the run could not start: "+msg)
	}
	s.watchAsync(e.cfg, run, input.Seq)
	return run
}

// runKey is the idempotency key of a run's session and input.
func runKey(r store.ScheduleRun) string {
	return "schedule:" + r.Schedule + ":" + r.FireTime.UTC().Format(time.RFC3339Nano)
}

// runInput is the prompt, plus which schedule and fire time this is.
func runInput(e *scheduleEntry, r store.ScheduleRun) string {
	at := r.FireTime.In(e.loc).Format(time.RFC3339)
	if r.Trigger == store.TriggerManual {
		return fmt.Sprintf("%s\n\nScheduled run of %s for %s (started by hand with run now).", e.cfg.Prompt, e.cfg.Name, at)
	}
	return fmt.Sprintf("%s\n\nScheduled run of %s for %s.", e.cfg.Prompt, e.cfg.Name, at)
}

func orNone(s string) string {
	if s == "" {
		return "not created yet"
	}
	return s
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
