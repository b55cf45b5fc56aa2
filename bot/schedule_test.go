package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store"
)

// testClock is a clock a test sets by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock(t time.Time) *testClock { return &testClock{t: t} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// fakePoster is an OutcomePoster whose behaviour a test sets.
type fakePoster struct {
	PostFunc func(ctx context.Context, s config.ScheduleConfig, run ScheduleRun, outcome string) error
}

var _ schedule.OutcomePoster = (*fakePoster)(nil)

func (p *fakePoster) PostScheduleOutcome(ctx context.Context, s config.ScheduleConfig, run ScheduleRun, outcome string) error {
	return p.PostFunc(ctx, s, run, outcome)
}

type postCall struct {
	cfg     config.ScheduleConfig
	run     ScheduleRun
	outcome string
}

// recordingPoster returns a poster that sends every call to the channel.
func recordingPoster() (*fakePoster, chan postCall) {
	ch := make(chan postCall, 16)
	return &fakePoster{PostFunc: func(_ context.Context, s config.ScheduleConfig, run ScheduleRun, outcome string) error {
		ch <- postCall{s, run, outcome}
		return nil
	}}, ch
}

func paris(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// scheduleApp is what startScheduleApp needs besides the config text.
type scheduleApp struct {
	dir    string // config.yaml and data live here; reuse it to restart
	fake   *fakemodel.Server
	clock  *testClock
	poster schedule.OutcomePoster
	opts   Options
	edit   func(*config.Config) // changes the loaded config (keys validation would refuse)
}

// startScheduleApp starts a brain whose schedules run on the test's clock.
func startScheduleApp(t *testing.T, sa scheduleApp, extra string) *testApp {
	t.Helper()
	cfg, err := config.Load(writeConfig(t, sa.dir, sa.fake.URL(), extra), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if sa.edit != nil {
		sa.edit(cfg)
	}
	cfg.Log.Level = "debug"
	ta := &testApp{t: t, fake: sa.fake, logs: &syncBuffer{}}
	opts := sa.opts
	opts.Stderr, opts.Clock = ta.logs, sa.clock.Now
	app, err := New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sa.poster != nil {
		app.SetOutcomePoster(sa.poster)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ta.app, ta.base = app, "http://"+app.Addr()
	if len(cfg.APIKeys) > 0 {
		ta.key = cfg.APIKeys[0].Key
	}
	t.Cleanup(func() {
		sa.fake.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return ta
}

func (ta *testApp) tick(now time.Time) {
	ta.t.Helper()
	if err := ta.app.Schedules().Tick(context.Background(), now); err != nil {
		ta.t.Fatalf("Tick(%s): %v", now, err)
	}
}

func (ta *testApp) runs(name string) []store.ScheduleRun {
	ta.t.Helper()
	runs, err := ta.app.store.Runs(context.Background(), name, 0)
	if err != nil {
		ta.t.Fatal(err)
	}
	return runs
}

// waitRunsDone polls until no run of the schedule is running. The
// deadline only turns a hang into a failure.
func (ta *testApp) waitRunsDone(name string) []store.ScheduleRun {
	ta.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs := ta.runs(name)
		busy := false
		for _, r := range runs {
			busy = busy || r.Status == store.RunRunning
		}
		if !busy {
			return runs
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("runs of %s still running: %+v", name, runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitPost(t *testing.T, ch <-chan postCall) postCall {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("no outcome was posted")
		return postCall{}
	}
}

func fireTimes(runs []store.ScheduleRun, loc *time.Location) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[len(runs)-1-i] = r.FireTime.In(loc).Format(time.RFC3339) // oldest first
	}
	return out
}

// TestSchedules_DSTThroughApp ticks a real app through both DST changes of
// Europe/Paris and checks the instants it fired and what the agent was told.
func TestSchedules_DSTThroughApp(t *testing.T) {
	loc := paris(t)
	for _, c := range []struct {
		name         string
		from, to     time.Time
		night, daily []string
	}{
		{"spring", time.Date(2026, 3, 27, 12, 0, 0, 0, loc), time.Date(2026, 3, 31, 0, 0, 0, 0, loc),
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"},
			[]string{"2026-03-28T09:00:00+01:00", "2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"}},
		{"autumn", time.Date(2026, 10, 24, 12, 0, 0, 0, loc), time.Date(2026, 10, 27, 0, 0, 0, 0, loc),
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"},
			[]string{"2026-10-25T09:00:00+01:00", "2026-10-26T09:00:00+01:00"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := fakemodel.New()
			t.Cleanup(fake.Close)
			clock := newTestClock(c.from)
			ta := startScheduleApp(t, scheduleApp{dir: t.TempDir(), fake: fake, clock: clock}, `schedules:
  - {name: night, cron: "30 2 * * *", timezone: Europe/Paris, prompt: Night work., overlap: allow}
  - {name: daily, cron: "0 9 * * *", timezone: Europe/Paris, prompt: Day work., overlap: allow}
`)
			for now := c.from; !now.After(c.to); now = now.Add(10 * time.Minute) {
				clock.Set(now)
				ta.tick(now)
			}
			night, daily := ta.waitRunsDone("night"), ta.waitRunsDone("daily")
			if got := fireTimes(night, loc); strings.Join(got, " ") != strings.Join(c.night, " ") {
				t.Errorf("night fired at\n %v\nwant\n %v", got, c.night)
			}
			if got := fireTimes(daily, loc); strings.Join(got, " ") != strings.Join(c.daily, " ") {
				t.Errorf("daily fired at\n %v\nwant\n %v", got, c.daily)
			}
			for _, r := range append(night, daily...) {
				if r.Status != store.RunCompleted || r.Trigger != store.TriggerCron {
					t.Errorf("run %+v", r)
				}
				s, evs := ta.waitTurns(r.SessionID, 1)
				if s.Origin != engine.OriginSchedule || s.Interactive || s.StartedBy != r.Schedule {
					t.Errorf("session %+v", s)
				}
				in := payload[engine.Input](t, evs[0])
				want := fmt.Sprintf("Scheduled run of %s for %s.", r.Schedule, r.FireTime.In(loc).Format(time.RFC3339))
				if evs[0].Type != engine.EventUserMessage || !strings.HasSuffix(in.Text, want) {
					t.Errorf("input %q, want it to end with %q", in.Text, want)
				}
				if r.Outcome != "echo: "+in.Text {
					t.Errorf("outcome %q", r.Outcome)
				}
			}
		})
	}
}

func TestSchedules_OverlapSkip(t *testing.T) {
	loc := paris(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	start := time.Date(2026, 6, 1, 9, 55, 0, 0, loc)
	clock := newTestClock(start)
	ta := startScheduleApp(t, scheduleApp{dir: t.TempDir(), fake: fake, clock: clock}, `schedules:
  - {name: sync, cron: "*/10 * * * *", timezone: Europe/Paris, prompt: Sync.}
  - {name: both, cron: "*/10 * * * *", timezone: Europe/Paris, prompt: Both., overlap: allow}
`)
	fake.Push(fakemodel.Hold(), fakemodel.Hold())
	first := start.Add(5 * time.Minute)
	clock.Set(first)
	ta.tick(first)
	if _, err := fake.WaitRequests(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	clock.Set(first.Add(10 * time.Minute))
	ta.tick(first.Add(10 * time.Minute))

	runs := ta.runs("sync")
	if len(runs) != 2 || runs[0].Status != store.RunSkipped || runs[1].Status != store.RunRunning {
		t.Fatalf("sync runs: %+v", runs)
	}
	if runs[0].SessionID != "" || !strings.Contains(runs[0].Outcome, runs[1].SessionID) || !strings.Contains(runs[0].Outcome, "2026-06-01T10:00:00+02:00") {
		t.Fatalf("skipped run: %+v", runs[0])
	}
	if both := ta.runs("both"); len(both) != 2 || both[0].Status != store.RunRunning || both[1].Status != store.RunRunning {
		t.Fatalf("overlap allow runs: %+v", both)
	}
	// Run now respects overlap: skip too.
	status, _, body := ta.do("POST", "/v1/schedules/sync/run", nil)
	if status != 409 || !strings.Contains(string(body), `"code":"conflict"`) || !strings.Contains(string(body), "overlap: skip") {
		t.Fatalf("run now while running: %d %s", status, body)
	}

	fake.Release()
	ta.waitRunsDone("sync")
	ta.waitRunsDone("both")
	next := first.Add(20 * time.Minute)
	clock.Set(next)
	ta.tick(next)
	runs = ta.waitRunsDone("sync")
	if len(runs) != 3 || runs[0].Status != store.RunCompleted || !runs[0].FireTime.Equal(next) {
		t.Fatalf("after the run ended, the next occurrence runs: %+v", runs)
	}
}

// TestSchedules_RestartDoesNotRerunClaimedFire stops brain mid-run, starts
// it again on the same data: the claimed fire is watched to its end (not
// run again), a second process cannot claim it, and the next start catches
// up only the most recent missed occurrence.
func TestSchedules_RestartDoesNotRerunClaimedFire(t *testing.T) {
	loc := paris(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	yaml := `schedules:
  - {name: daily, cron: "0 9 * * *", timezone: Europe/Paris, prompt: Report.}
`
	fire := time.Date(2026, 5, 4, 9, 0, 0, 0, loc)
	clock := newTestClock(fire.Add(-time.Hour))
	post := func(c *config.Config) { c.Schedules[0].PostTo.SlackChannel = "C1" }

	first := startScheduleApp(t, scheduleApp{dir: dir, fake: fake, clock: clock, edit: post}, yaml)
	fake.Push(fakemodel.Hold())
	clock.Set(fire.Add(5 * time.Second))
	first.tick(fire.Add(5 * time.Second))
	if _, err := fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	sessionID := first.runs("daily")[0].SessionID
	// Stop with a short grace: the held turn is interrupted, the run stays
	// recorded as running.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := first.app.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	poster, posted := recordingPoster()
	clock.Set(fire.Add(30 * time.Second))
	second := startScheduleApp(t, scheduleApp{dir: dir, fake: fake, clock: clock, poster: poster, edit: post}, yaml)
	call := waitPost(t, posted)
	if call.run.SessionID != sessionID || call.run.Status != store.RunInterrupted || !strings.Contains(call.outcome, "shut down") {
		t.Fatalf("picked-up run posted %+v", call)
	}
	second.tick(fire.Add(30 * time.Second))
	second.tick(fire) // an older time changes nothing
	// A second process on the same database, started before the fire time,
	// loses the claim.
	before := func() time.Time { return fire.Add(-time.Minute) }
	other, err := schedule.New(second.app.cfg, second.app.engine, second.app.store, second.app.log, before)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := other.Tick(context.Background(), fire.Add(time.Minute)); err != nil {
		t.Fatalf("losing a claim is not an error: %v", err)
	}
	if err := other.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	runs := second.runs("daily")
	if len(runs) != 1 || runs[0].Status != store.RunInterrupted || runs[0].SessionID != sessionID {
		t.Fatalf("runs after restart: %+v", runs)
	}
	if list, _ := second.app.Engine().Sessions(context.Background(), engine.SessionFilter{}); len(list) != 1 {
		t.Fatalf("%d sessions, want 1", len(list))
	}
	if fake.Received() != 1 {
		t.Fatalf("model called %d times, want 1", fake.Received())
	}
	if err := second.app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Down for two days: the next start runs only the most recent missed
	// occurrence, and a schedule that never ran does not fire at start.
	restart := fire.Add(50 * time.Hour) // 2026-05-06 11:00
	clock.Set(restart)
	third := startScheduleApp(t, scheduleApp{dir: dir, fake: fake, clock: clock, edit: post}, yaml+
		`  - {name: fresh, cron: "0 9 * * *", timezone: Europe/Paris, prompt: New.}
`)
	third.tick(restart)
	runs = third.waitRunsDone("daily")
	if got := fireTimes(runs, loc); strings.Join(got, " ") != "2026-05-04T09:00:00+02:00 2026-05-06T09:00:00+02:00" {
		t.Fatalf("after downtime fired %v", got)
	}
	if fresh := third.runs("fresh"); len(fresh) != 0 {
		t.Fatalf("a new schedule caught up: %+v", fresh)
	}
}

// TestSchedules_LoopFiresOnTime checks the production loop's wiring: the
// clock runs with wall time from 150ms before a fire time, and the loop,
// not the test, fires it. It is the only schedule test that lets wall time
// pass.
func TestSchedules_LoopFiresOnTime(t *testing.T) {
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	fire := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	base, wall := fire.Add(-150*time.Millisecond), time.Now()
	clock := &testClock{}
	follow := func() time.Time { return base.Add(time.Since(wall)) }
	clock.Set(follow())
	ta := startScheduleApp(t, scheduleApp{dir: t.TempDir(), fake: fake, clock: clock}, `schedules:
  - {name: nine, cron: "0 9 * * *", prompt: Go.}
`)
	deadline := time.Now().Add(20 * time.Second)
	for len(ta.runs("nine")) == 0 {
		clock.Set(follow())
		if time.Now().After(deadline) {
			t.Fatal("the loop did not fire")
		}
		time.Sleep(5 * time.Millisecond)
	}
	runs := ta.waitRunsDone("nine")
	if len(runs) != 1 || !runs[0].FireTime.Equal(fire) || runs[0].Status != store.RunCompleted {
		t.Fatalf("runs %+v", runs)
	}
}
