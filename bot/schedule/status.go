package schedule

import (
	"context"
	"time"

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
func statuses(ctx context.Context, store store.Runs, entries []*scheduleEntry, now time.Time) ([]Status, error) {
	out := make([]Status, 0, len(entries))
	for _, e := range entries {
		c := e.cfg
		st := Status{
			Name: c.Name, Cron: c.Cron, Timezone: c.Timezone, Agent: c.Agent,
			Enabled: c.IsEnabled(), Overlap: c.Overlap, LastRuns: []Run{},
		}
		if (c.PostTo != config.PostToConfig{}) {
			postTo := c.PostTo
			st.PostTo = &postTo
		}
		if st.Enabled {
			if next := e.next(now); !next.IsZero() {
				next = next.In(e.loc)
				st.NextFire = &next
			}
		}
		runs, err := store.Runs(ctx, c.Name, lastRunsShown)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			st.LastRuns = append(st.LastRuns, viewRun(r, e.loc))
		}
		out = append(out, st)
	}
	return out, nil
}

// Status describes every configured schedule, in config order.
func (s *Scheduler) Status(ctx context.Context) ([]Status, error) {
	return statuses(ctx, s.store, s.entries, s.clock())
}

// Statuses describes the configured schedules and their recorded runs as of
// now without a Scheduler, for the CLI: it works whether or not brain serve
// runs.
func Statuses(ctx context.Context, cfg *config.Config, store store.Runs, now time.Time) ([]Status, error) {
	entries, err := parseSchedules(cfg)
	if err != nil {
		return nil, err
	}
	return statuses(ctx, store, entries, now)
}
