package schedule

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/store"
)

// TestScheduler_AdoptsRunsOfAProcessThatDied: a run another process
// claimed and started, left running when that process died, is watched
// by adopt (its session recovered as interrupted) and finished once.
func TestScheduler_AdoptsRunsOfAProcessThatDied(t *testing.T) {
	fire := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return fire.Add(time.Hour) }
	run := store.ScheduleRun{Schedule: "nine", FireTime: fire, Trigger: store.TriggerCron, SessionID: "ses_dead", Status: store.RunRunning, CreatedAt: fire, UpdatedAt: fire}
	var orphaned atomic.Bool // the other process died: its run shows up
	var mu sync.Mutex
	var finished []store.ScheduleRun
	runs := neverRan()
	runs.RunningRunsFunc = func(context.Context, string) ([]store.ScheduleRun, error) {
		if !orphaned.Load() {
			return nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if len(finished) > 0 {
			return nil, nil
		}
		return []store.ScheduleRun{run}, nil
	}
	runs.FinishRunFunc = func(_ context.Context, r store.ScheduleRun) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		finished = append(finished, r)
		return len(finished) == 1, nil
	}
	input, _ := engine.NewEvent(engine.Input{Text: "nine"})
	input.Seq = 1
	errEv, _ := engine.NewEvent(engine.SessionError{Code: engine.CodeInterrupted, Message: "brain stopped while this turn was running", InputID: input.ID})
	errEv.Seq = 2
	var sends atomic.Int64
	eng := &fakeEngine{
		CreateSessionFunc: func(_ context.Context, n engine.NewSession) (engine.Session, bool, error) {
			return engine.Session{ID: "ses_dead"}, false, nil
		},
		SendFunc: func(context.Context, string, engine.Input) (engine.Event, bool, error) {
			sends.Add(1)
			return input, true, nil // recorded by the dead process
		},
		SessionFunc: func(context.Context, string) (engine.Session, error) {
			return engine.Session{ID: "ses_dead", Status: engine.StatusInterrupted, InputCursor: 1}, nil
		},
		EventsFunc: func(context.Context, string, int64, int) ([]engine.Event, error) {
			return []engine.Event{input, errEv}, nil
		},
		ChangedFunc: func(string) <-chan struct{} { return make(chan struct{}) },
	}
	s := newScheduler(t, eng, runs, now, config.ScheduleConfig{Name: "nine", Cron: "0 9 * * *", Timezone: "UTC"})
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(ctx) })

	orphaned.Store(true)
	if err := s.adopt(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(finished)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the orphaned run was never finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.adopt(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(finished) != 1 || finished[0].Status != store.RunInterrupted {
		raw, _ := json.Marshal(finished)
		t.Fatalf("finished %s, want the run once, interrupted", raw)
	}
	if sends.Load() != 1 {
		t.Fatalf("input sent %d times (idempotent, but once is what adopt needs)", sends.Load())
	}
}
