package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/engine"
	"brain/engine/durable"
)

// ScheduleStatus is one schedule as GET /v1/schedules and `brain schedules
// list` show it: its config, its next fire time (in its zone; nil when
// disabled or when the expression never matches again) and its latest runs,
// newest first.
type ScheduleStatus struct {
	Name     string        `json:"name"`
	Cron     string        `json:"cron"`
	Timezone string        `json:"timezone"`
	Agent    string        `json:"agent"`
	Enabled  bool          `json:"enabled"`
	Overlap  string        `json:"overlap"`
	PostTo   *PostTo       `json:"post_to,omitempty"`
	NextFire *time.Time    `json:"next_fire"`
	LastRuns []ScheduleRun `json:"last_runs"`
}

// PostTo is a schedule's post_to, as the API shows it.
type PostTo struct {
	SlackChannel string `json:"slack_channel,omitempty"`
	LinearIssue  string `json:"linear_issue,omitempty"`
}

// scheduleStatuses describes entries as of now, with up to lastRunsShown
// runs each.
func scheduleStatuses(ctx context.Context, store durable.Runs, entries []*scheduleEntry, now time.Time) ([]ScheduleStatus, error) {
	out := make([]ScheduleStatus, 0, len(entries))
	for _, e := range entries {
		c := e.cfg
		st := ScheduleStatus{
			Name: c.Name, Cron: c.Cron, Timezone: c.Timezone, Agent: c.Agent,
			Enabled: c.IsEnabled(), Overlap: c.Overlap, LastRuns: []ScheduleRun{},
		}
		if (c.PostTo != config.PostToConfig{}) {
			st.PostTo = &PostTo{SlackChannel: c.PostTo.SlackChannel, LinearIssue: c.PostTo.LinearIssue}
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
func (s *Scheduler) Status(ctx context.Context) ([]ScheduleStatus, error) {
	return scheduleStatuses(ctx, s.store, s.entries, s.clock())
}

// Schedules describes the configured schedules and their recorded runs, for
// the CLI; it works whether or not brain serve runs.
func (i *Inspector) Schedules(ctx context.Context, cfg *config.Config, now time.Time) ([]ScheduleStatus, error) {
	entries, err := parseSchedules(cfg)
	if err != nil {
		return nil, err
	}
	return scheduleStatuses(ctx, i.store, entries, now)
}

// TriggerSchedule asks the brain daemon listening at cfg.Listen to run a
// schedule now (POST /v1/schedules/{name}/run), with the first API key if
// any. It is what `brain schedules run` does.
func TriggerSchedule(ctx context.Context, cfg *config.Config, name string) (ScheduleRun, error) {
	base, err := daemonURL(cfg.Listen)
	if err != nil {
		return ScheduleRun{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/schedules/"+url.PathEscape(name)+"/run", nil)
	if err != nil {
		return ScheduleRun{}, fmt.Errorf("run schedule %s: %w", name, err)
	}
	if len(cfg.APIKeys) > 0 {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKeys[0])
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return ScheduleRun{}, fmt.Errorf("brain does not answer at %s; is `brain serve` running with this config? (%v)", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return ScheduleRun{}, fmt.Errorf("run schedule %s: read answer: %w", name, err)
	}
	if resp.StatusCode != http.StatusAccepted {
		var env api.ErrorEnvelope
		if json.Unmarshal(body, &env) != nil || env.Error.Code == "" {
			return ScheduleRun{}, fmt.Errorf("run schedule %s: %s from %s", name, resp.Status, base)
		}
		return ScheduleRun{}, engine.Errorf(env.Error.Code, "%s", env.Error.Message)
	}
	var run ScheduleRun
	if err := json.Unmarshal(body, &run); err != nil {
		return ScheduleRun{}, fmt.Errorf("run schedule %s: decode answer: %w", name, err)
	}
	return run, nil
}

// daemonURL turns a listen address into a URL a local client can dial: an
// unspecified host (":8080", "0.0.0.0:8080") is dialled on loopback.
func daemonURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
