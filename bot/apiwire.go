package bot

import (
	"context"

	"brain/bot/api"
	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
)

var (
	_ api.Engine    = (*engine.Engine)(nil)
	_ api.Schedules = apiScheduler{}
)

// apiScheduler shows the scheduler to the API in the API's own types. The
// conversions of runs and post_to targets compile only while both sides
// have the same fields, so `brain schedules` and GET /v1/schedules cannot
// drift apart.
type apiScheduler struct{ s *schedule.Scheduler }

func (a apiScheduler) Status(ctx context.Context) ([]api.ScheduleStatus, error) {
	list, err := a.s.Status(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.ScheduleStatus, 0, len(list))
	for _, st := range list {
		v := api.ScheduleStatus{
			Name: st.Name, Cron: st.Cron, Timezone: st.Timezone, Agent: st.Agent,
			Enabled: st.Enabled, Overlap: st.Overlap, NextFire: st.NextFire,
			LastRuns: make([]api.ScheduleRun, 0, len(st.LastRuns)),
		}
		if st.PostTo != nil {
			p := api.PostTo(*st.PostTo)
			v.PostTo = &p
		}
		for _, r := range st.LastRuns {
			v.LastRuns = append(v.LastRuns, api.ScheduleRun(r))
		}
		out = append(out, v)
	}
	return out, nil
}

func (a apiScheduler) RunNow(ctx context.Context, name string) (api.ScheduleRun, error) {
	run, err := a.s.RunNow(ctx, name)
	return api.ScheduleRun(run), err
}

// apiKeys are the config's api_keys in the API's type; the conversion
// compiles only while both have the same fields.
func apiKeys(keys []config.APIKey) []api.APIKey {
	out := make([]api.APIKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, api.APIKey(k))
	}
	return out
}
