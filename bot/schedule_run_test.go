package bot

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store"
	"brain/tools"
)

// TestSchedules_NobodyToAskOrApprove: a scheduled session whose model calls
// ask and an approval tool gets tool errors naming the schedule, leaves no
// pending approval or question, ends idle, and its final text is posted.
func TestSchedules_NobodyToAskOrApprove(t *testing.T) {
	loc := paris(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	var previews int
	var mu sync.Mutex
	deploy := tools.Definition{
		Name: "deploy", Description: "Deploy a build",
		Input: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
		Preview: func(context.Context, tools.Call) (tools.Card, error) {
			mu.Lock()
			previews++
			mu.Unlock()
			return tools.Card{Title: "Deploy"}, nil
		},
		Apply: func(context.Context, tools.Call, tools.Decision) (json.RawMessage, error) {
			t.Error("apply ran in a scheduled session")
			return nil, nil
		},
	}
	poster, posted := recordingPoster()
	start := time.Date(2026, 6, 1, 2, 0, 0, 0, loc)
	clock := newTestClock(start)
	ta := startScheduleApp(t, scheduleApp{
		dir: t.TempDir(), fake: fake, clock: clock, poster: poster,
		opts: Options{Tools: []tools.Definition{deploy}},
		edit: func(c *config.Config) {
			c.Agents[0].Tools = []string{"ask", "deploy"}
			c.Schedules[0].PostTo.SlackChannel = "C0123456" // validation wants a slack block
		},
	}, `schedules:
  - {name: nightly-deploy, cron: "0 3 * * *", timezone: Europe/Paris, prompt: Deploy the nightly build.}
`)
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Deploy to prod?"}`}, fakemodel.Call{Name: "deploy", Input: `{"env":"prod"}`}),
		fakemodel.Text("Nothing deployed: a person must approve the prod deploy."),
	)
	fire := time.Date(2026, 6, 1, 3, 0, 0, 0, loc)
	clock.Set(fire.Add(time.Second))
	ta.tick(fire.Add(time.Second))

	call := waitPost(t, posted)
	if call.outcome != "Nothing deployed: a person must approve the prod deploy." || call.run.Status != store.RunCompleted ||
		call.cfg.PostTo.SlackChannel != "C0123456" || call.run.Schedule != "nightly-deploy" || call.run.Outcome != call.outcome ||
		call.run.FireTime.Format(time.RFC3339) != "2026-06-01T03:00:00+02:00" {
		t.Fatalf("posted %+v", call)
	}
	s, evs := ta.waitTurns(call.run.SessionID, 1)
	if s.Status != engine.StatusIdle || s.OpenQuestion() != nil {
		t.Fatalf("session ends %s with question %s", s.Status, s.Question)
	}
	results := 0
	for _, ev := range evs {
		if ev.Type != engine.EventToolResult {
			continue
		}
		results++
		r := payload[engine.ToolCallResult](t, ev)
		if !r.Result.IsError || !strings.Contains(string(ev.Data), `schedule \"nightly-deploy\"`) {
			t.Errorf("tool result does not fail naming the schedule: %s", ev.Data)
		}
	}
	if results != 2 || countType(evs, engine.EventQuestionAsked) != 0 || countType(evs, engine.EventApprovalRequested) != 0 {
		t.Fatalf("%d tool results, %d questions, %d approvals", results, countType(evs, engine.EventQuestionAsked), countType(evs, engine.EventApprovalRequested))
	}
	pending, err := ta.app.Engine().Approvals(context.Background(), engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending approvals: %+v, %v", pending, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if previews != 0 {
		t.Fatalf("preview ran %d times", previews)
	}
}

// TestSchedules_FailedRuns: a provider failure fails the run with the
// error as outcome, posted; a run whose session cannot start fails at once;
// a poster error is logged.
func TestSchedules_FailedRuns(t *testing.T) {
	loc := paris(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	var mu sync.Mutex
	var calls []postCall
	poster := &fakePoster{PostFunc: func(_ context.Context, s config.ScheduleConfig, run ScheduleRun, outcome string) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, postCall{s, run, outcome})
		return errString("slack is down")
	}}
	start := time.Date(2026, 1, 5, 8, 0, 0, 0, loc)
	clock := newTestClock(start)
	ta := startScheduleApp(t, scheduleApp{
		dir: t.TempDir(), fake: fake, clock: clock, poster: poster,
		edit: func(c *config.Config) {
			c.Schedules[0].PostTo.SlackChannel = "C1"
			c.Schedules[1].PostTo.SlackChannel = "C2"
			c.Schedules[1].Agent = "ghost" // gone since validation
		},
	}, `schedules:
  - {name: broken, cron: "0 9 * * *", timezone: Europe/Paris, prompt: Try.}
  - {name: orphan, cron: "0 9 * * *", timezone: Europe/Paris, prompt: Try.}
`)
	fake.Push(fakemodel.Fail(401, "invalid x-api-key"))
	now := start.Add(time.Hour)
	clock.Set(now)
	ta.tick(now)

	broken := ta.waitRunsDone("broken")
	if len(broken) != 1 || broken[0].Status != store.RunFailed || !strings.Contains(broken[0].Outcome, "invalid x-api-key") {
		t.Fatalf("broken runs: %+v", broken)
	}
	orphan := ta.runs("orphan")
	if len(orphan) != 1 || orphan[0].Status != store.RunFailed || orphan[0].SessionID != "" ||
		!strings.Contains(orphan[0].Outcome, `the run could not start: unknown agent "ghost"`) {
		t.Fatalf("orphan runs: %+v", orphan)
	}
	// A run is stored as failed before its outcome is posted, so each post
	// (and its logged error) is waited for, not assumed.
	posted := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(calls)
	}
	deadline := time.Now().Add(10 * time.Second)
	for posted() < 2 || strings.Count(ta.logs.String(), "post schedule outcome") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("posted %d outcomes, want 2, and the poster's errors logged:\n%s", posted(), ta.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("posted %d outcomes, want 2: %+v", len(calls), calls)
	}
	for _, c := range calls {
		if c.run.Status != store.RunFailed || c.outcome != c.run.Outcome || c.outcome == "" {
			t.Errorf("posted %+v", c)
		}
	}
}
