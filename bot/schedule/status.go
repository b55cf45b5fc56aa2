package schedule

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"

	"brain/bot/config"
	"brain/store"
)

// Status is one schedule as GET /v1/schedules and `brain schedules
// list` show it: its config, its next fire time (in its zone; nil when
// disabled or when the expression never matches again) and its latest runs,
// newest first.
type Status struct {
	Name     string     `json:"name"`
	Cron     string     `json:"cron"`
	Timezone string     `json:"timezone"`
	Agent    string     `json:"agent"`
	Enabled  bool       `json:"enabled"`
	Overlap  string     `json:"overlap"`
	PostTo   *PostTo    `json:"post_to,omitempty"`
	NextFire *time.Time `json:"next_fire"`
	LastRuns []Run      `json:"last_runs"`
}

// PostTo is a schedule's post_to, as the API shows it: the config's, so a
// platform's target shows without an edit here.
type PostTo = config.PostToConfig

// statuses describes entries as of now, with up to lastRunsShown runs each.
// anchors are the times the running scheduler counts @every schedules
// from (nil without one: their last cron run's fire time).
func statuses(ctx context.Context, st store.Runs, entries []*scheduleEntry, now time.Time, anchors map[string]time.Time) ([]Status, error) {
	out := make([]Status, 0, len(entries))
	for _, e := range entries {
		c := e.cfg
		sv := Status{
			Name: c.Name, Cron: c.Cron, Timezone: c.Timezone, Agent: c.Agent,
			Enabled: c.IsEnabled(), Overlap: c.Overlap, LastRuns: []Run{},
		}
		if (c.PostTo != config.PostToConfig{}) {
			postTo := c.PostTo
			sv.PostTo = &postTo
		}
		runs, err := st.Runs(ctx, c.Name, lastRunsShown)
		if err != nil {
			return nil, err
		}
		if sv.Enabled {
			anchor, ok := anchors[c.Name]
			if !ok {
				for _, r := range runs {
					if r.Trigger == "" || r.Trigger == store.TriggerCron {
						anchor = r.FireTime
						break
					}
				}
			}
			if next := e.nextFire(anchor, now); !next.IsZero() {
				next = next.In(e.loc)
				sv.NextFire = &next
			}
		}
		for _, r := range runs {
			sv.LastRuns = append(sv.LastRuns, viewRun(r, e.loc))
		}
		out = append(out, sv)
	}
	return out, nil
}

// Status describes every configured schedule, in config order.
func (s *Scheduler) Status(ctx context.Context) ([]Status, error) {
	s.mu.Lock()
	anchors := make(map[string]time.Time, len(s.entries))
	if s.started {
		for _, e := range s.entries {
			anchors[e.cfg.Name] = e.last
		}
	}
	s.mu.Unlock()
	return statuses(ctx, s.store, s.entries, s.clock(), anchors)
}

// Statuses describes the configured schedules and their recorded runs as of
// now without a Scheduler, for the CLI: it works whether or not brain serve
// runs.
func Statuses(ctx context.Context, cfg *config.Config, store store.Runs, now time.Time) ([]Status, error) {
	entries, err := parseSchedules(cfg)
	if err != nil {
		return nil, err
	}
	return statuses(ctx, store, entries, now, nil)
}

// nextFire is e's next fire time after now. A cron expression's follows
// the clock; an @every schedule counts from anchor (the time the running
// scheduler counts from, or its last fire), as the scheduler does, so the
// time shown does not move with each look. A zero anchor counts from now.
func (e *scheduleEntry) nextFire(anchor, now time.Time) time.Time {
	every, ok := e.sched.(cron.ConstantDelaySchedule)
	if e.spec != nil || !ok || anchor.IsZero() || every.Delay <= 0 {
		return e.next(now)
	}
	next := e.next(anchor)
	if next.After(now) {
		return next
	}
	// Occurrences passed (a stopped daemon, a late look): the first one
	// after now on the same grid.
	return next.Add((now.Sub(next)/every.Delay + 1) * every.Delay)
}
