package bot

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"brain/bot/api/client"
	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store"
)

const apiSchedules = `api_keys: [sched-key-1-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f, sched-key-2-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f]
schedules:
  - {name: digest, cron: "0 9 * * 1-5", timezone: Europe/Paris, prompt: Summarise yesterday.}
  - {name: paused, cron: "0 12 * * *", enabled: false, prompt: Later.}
`

func TestSchedulesAPI_ListAndRunNow(t *testing.T) {
	loc := paris(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	now := time.Date(2026, 3, 27, 10, 0, 0, 0, loc) // a Friday; Monday is after the DST change
	clock := newTestClock(now)
	ta := startScheduleApp(t, scheduleApp{dir: t.TempDir(), fake: fake, clock: clock,
		edit: func(c *config.Config) { c.Schedules[0].PostTo.SlackChannel = "C0123456" }}, apiSchedules)

	var list struct{ Schedules []ScheduleStatus }
	ta.must(http.StatusOK, "GET", "/v1/schedules", nil, &list)
	if len(list.Schedules) != 2 {
		t.Fatalf("schedules: %+v", list)
	}
	d, p := list.Schedules[0], list.Schedules[1]
	if d.Name != "digest" || d.Cron != "0 9 * * 1-5" || d.Timezone != "Europe/Paris" || d.Agent != "default" ||
		!d.Enabled || d.Overlap != "skip" || d.NextFire == nil || len(d.LastRuns) != 0 || d.PostTo == nil || d.PostTo.SlackChannel != "C0123456" {
		t.Fatalf("digest: %+v", d)
	}
	if p.Name != "paused" || p.Enabled || p.NextFire != nil || p.Timezone != "UTC" || p.PostTo != nil {
		t.Fatalf("paused: %+v", p)
	}
	// The raw shape: next_fire in the schedule's zone, last_runs a list.
	_, _, raw := ta.do("GET", "/v1/schedules", nil)
	for _, want := range []string{`"next_fire":"2026-03-30T09:00:00+02:00"`, `"next_fire":null`, `"last_runs":[]`,
		`"enabled":false`, `"overlap":"skip"`, `"post_to":{"slack_channel":"C0123456"}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("GET /v1/schedules lacks %s:\n%s", want, raw)
		}
	}

	// Run now: 202 with the run, claimed at the clock's time.
	fake.Push(fakemodel.Hold())
	var run ScheduleRun
	ta.must(http.StatusAccepted, "POST", "/v1/schedules/digest/run", nil, &run)
	if run.Schedule != "digest" || run.Trigger != store.TriggerManual || run.Status != store.RunRunning ||
		run.SessionID == "" || !run.FireTime.Equal(now) {
		t.Fatalf("run now: %+v", run)
	}
	if _, err := fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Set(now.Add(time.Second))
	status, _, body := ta.do("POST", "/v1/schedules/digest/run", nil)
	if status != http.StatusConflict || !strings.Contains(string(body), `"code":"conflict"`) {
		t.Fatalf("second run now while the first runs: %d %s", status, body)
	}
	fake.Release()
	s, evs := ta.waitTurns(run.SessionID, 1)
	if s.Origin != engine.OriginSchedule || s.StartedBy != "digest" || s.Interactive {
		t.Fatalf("session %+v", s)
	}
	if !strings.Contains(string(evs[0].Data), "Scheduled run of digest for 2026-03-27T10:00:00+01:00 (started by hand with run now).") {
		t.Fatalf("input %s", evs[0].Data)
	}
	ta.waitRunsDone("digest")

	ta.must(http.StatusOK, "GET", "/v1/schedules", nil, &list)
	last := list.Schedules[0].LastRuns
	if len(last) != 1 || last[0].Status != store.RunCompleted || !strings.HasPrefix(last[0].Outcome, "echo: Summarise yesterday.") ||
		last[0].SessionID != run.SessionID || last[0].FireTime.Format(time.RFC3339) != "2026-03-27T10:00:00+01:00" {
		t.Fatalf("last runs: %+v", last)
	}

	// A disabled schedule runs by hand; an unknown one is 404.
	ta.must(http.StatusAccepted, "POST", "/v1/schedules/paused/run", nil, &run)
	if run.Status != store.RunRunning || run.FireTime.Location().String() != "UTC" {
		t.Fatalf("paused run now: %+v", run)
	}
	status, _, body = ta.do("POST", "/v1/schedules/nope/run", nil)
	if status != http.StatusNotFound || !strings.Contains(string(body), `"code":"not_found"`) || !strings.Contains(string(body), `no schedule named \"nope\"`) {
		t.Fatalf("unknown schedule: %d %s", status, body)
	}
	ta.key = ""
	if status, _, _ := ta.do("GET", "/v1/schedules", nil); status != http.StatusUnauthorized {
		t.Fatalf("GET /v1/schedules without a key: %d", status)
	}
}

// TestTriggerSchedule is the client `brain schedules run` uses.
func TestTriggerSchedule(t *testing.T) {
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	ta := startScheduleApp(t, scheduleApp{dir: t.TempDir(), fake: fake, clock: newTestClock(time.Date(2026, 3, 27, 10, 0, 0, 0, time.UTC))}, apiSchedules)
	cfg := *ta.app.cfg
	cfg.Listen = ta.app.Addr()
	// TriggerSchedule is what `brain schedules run` does.
	TriggerSchedule := func(ctx context.Context, cfg *config.Config, name string) (ScheduleRun, error) {
		d, err := client.Dial(cfg)
		if err != nil {
			return ScheduleRun{}, err
		}
		return d.RunSchedule(ctx, name)
	}

	run, err := TriggerSchedule(context.Background(), &cfg, "digest")
	if err != nil || run.Status != store.RunRunning || run.SessionID == "" {
		t.Fatalf("TriggerSchedule = %+v, %v", run, err)
	}
	if _, err := TriggerSchedule(context.Background(), &cfg, "nope"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), `no schedule named "nope"`) {
		t.Fatalf("unknown schedule: %v", err)
	}
	cfg.APIKeys = []config.APIKey{{Key: "wrong"}}
	if _, err := TriggerSchedule(context.Background(), &cfg, "digest"); engine.CodeOf(err) != "unauthorized" {
		t.Fatalf("wrong key: %v", err)
	}
	ta.waitRunsDone("digest")
	if err := ta.app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := TriggerSchedule(context.Background(), &cfg, "digest"); err == nil || !strings.Contains(err.Error(), "is `brain serve` running") {
		t.Fatalf("daemon down: %v", err)
	}
}

func TestInspector_Schedules(t *testing.T) {
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	now := time.Date(2026, 3, 27, 10, 0, 0, 0, time.UTC)
	ta := startScheduleApp(t, scheduleApp{dir: t.TempDir(), fake: fake, clock: newTestClock(now)}, apiSchedules)
	ta.must(http.StatusAccepted, "POST", "/v1/schedules/digest/run", nil, nil)
	ta.waitRunsDone("digest")

	ins, err := OpenInspector(context.Background(), ta.app.cfg) // beside the running daemon
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	list, err := ins.Schedules(context.Background(), ta.app.cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || len(list[0].LastRuns) != 1 || list[0].LastRuns[0].Status != store.RunCompleted ||
		list[0].NextFire.Format(time.RFC3339) != "2026-03-30T09:00:00+02:00" || list[1].NextFire != nil {
		t.Fatalf("inspector schedules: %+v", list)
	}
}
