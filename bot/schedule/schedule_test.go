package schedule

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/enginetest"
	"brain/internal/startstop/startstoptest"
	"brain/store"
)

// fakeEngine is an Engine whose behaviour a test sets; a method whose
// func is nil is not expected to be called (it panics).
type fakeEngine struct {
	// Starter holds CreateSessionWithInput, which schedules never call.
	enginetest.Starter
	CreateSessionFunc func(ctx context.Context, n engine.NewSession) (engine.Session, bool, error)
	SendFunc          func(ctx context.Context, sessionID string, in engine.Input) (engine.Event, bool, error)
	SessionFunc       func(ctx context.Context, id string) (engine.Session, error)
	EventsFunc        func(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error)
	ChangedFunc       func(sessionID string) <-chan struct{}
}

var _ Engine = (*fakeEngine)(nil)

func (f *fakeEngine) CreateSession(ctx context.Context, n engine.NewSession) (engine.Session, bool, error) {
	return f.CreateSessionFunc(ctx, n)
}

func (f *fakeEngine) Send(ctx context.Context, sessionID string, in engine.Input) (engine.Event, bool, error) {
	return f.SendFunc(ctx, sessionID, in)
}

func (f *fakeEngine) Session(ctx context.Context, id string) (engine.Session, error) {
	return f.SessionFunc(ctx, id)
}

func (f *fakeEngine) Events(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error) {
	return f.EventsFunc(ctx, sessionID, after, limit)
}

func (f *fakeEngine) Changed(sessionID string) <-chan struct{} { return f.ChangedFunc(sessionID) }

// fakeRuns is a store.Runs whose behaviour a test sets, like fakeEngine.
type fakeRuns struct {
	ClaimRunFunc    func(ctx context.Context, run store.ScheduleRun) (bool, error)
	UpdateRunFunc   func(ctx context.Context, run store.ScheduleRun) error
	FinishRunFunc   func(ctx context.Context, run store.ScheduleRun) (bool, error)
	RunsFunc        func(ctx context.Context, schedule string, limit int) ([]store.ScheduleRun, error)
	LastRunFunc     func(ctx context.Context, schedule string) (store.ScheduleRun, error)
	RunningRunsFunc func(ctx context.Context, schedule string) ([]store.ScheduleRun, error)
}

var _ store.Runs = (*fakeRuns)(nil)

func (f *fakeRuns) ClaimRun(ctx context.Context, run store.ScheduleRun) (bool, error) {
	return f.ClaimRunFunc(ctx, run)
}

func (f *fakeRuns) UpdateRun(ctx context.Context, run store.ScheduleRun) error {
	return f.UpdateRunFunc(ctx, run)
}

func (f *fakeRuns) FinishRun(ctx context.Context, run store.ScheduleRun) (bool, error) {
	return f.FinishRunFunc(ctx, run)
}

func (f *fakeRuns) Runs(ctx context.Context, schedule string, limit int) ([]store.ScheduleRun, error) {
	return f.RunsFunc(ctx, schedule, limit)
}

func (f *fakeRuns) LastRun(ctx context.Context, schedule string) (store.ScheduleRun, error) {
	return f.LastRunFunc(ctx, schedule)
}

func (f *fakeRuns) RunningRuns(ctx context.Context, schedule string) ([]store.ScheduleRun, error) {
	return f.RunningRunsFunc(ctx, schedule)
}

// neverRan is a store in which no schedule ever ran.
func neverRan() *fakeRuns {
	return &fakeRuns{
		LastRunFunc: func(context.Context, string) (store.ScheduleRun, error) {
			return store.ScheduleRun{}, engine.ErrNotFound
		},
		RunningRunsFunc: func(context.Context, string) ([]store.ScheduleRun, error) { return nil, nil },
	}
}

func newScheduler(t *testing.T, eng Engine, runs store.Runs, clock func() time.Time, schedules ...config.ScheduleConfig) *Scheduler {
	t.Helper()
	s, err := New(&config.Config{Schedules: schedules}, eng, runs, slog.New(slog.NewTextHandler(io.Discard, nil)), clock)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScheduler_SleepIsCapped(t *testing.T) {
	fire := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return fire.Add(-150 * time.Millisecond) }
	s := newScheduler(t, nil, nil, clock, config.ScheduleConfig{Name: "nine", Cron: "0 9 * * *", Timezone: "UTC"})
	s.entries[0].last = clock() // as Start sets it
	if d := s.untilNext(fire.Add(-time.Hour)); d != maxSleep {
		t.Fatalf("sleep an hour before = %s, want the cap %s", d, maxSleep)
	}
	if d := s.untilNext(clock()); d != 150*time.Millisecond {
		t.Fatalf("sleep 150ms before = %s", d)
	}
}

// TestScheduler_StartStop: Stop is safe before Start, twice and
// concurrently with Start; once stopped, the scheduler does not start.
func TestScheduler_StartStop(t *testing.T) {
	sc := config.ScheduleConfig{Name: "s", Cron: "0 9 * * *", Timezone: "UTC"}
	now := func() time.Time { return time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC) }
	ctx := context.Background()

	early := newScheduler(t, nil, neverRan(), now, sc)
	for range 2 {
		if err := early.Stop(ctx); err != nil {
			t.Fatalf("Stop before Start: %v", err)
		}
	}
	if err := early.Start(ctx); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	if err := early.Tick(ctx, now().Add(2*time.Hour)); err == nil {
		t.Fatal("a scheduler stopped before it started ticks")
	}
	if _, err := early.RunNow(ctx, "s"); engine.CodeOf(err) != engine.CodeOverloaded {
		t.Fatalf("RunNow on a stopped scheduler: %v", err)
	}

	for range 20 {
		s := newScheduler(t, nil, neverRan(), now, sc)
		startstoptest.Stress(t, s)
		if err := s.Tick(ctx, now().Add(2*time.Hour)); err == nil {
			t.Fatal("a stopped scheduler ticks")
		}
	}
}

// TestScheduler_StopWaitsUntilCtx: Stop waits for a watcher that does not
// end at once only until its ctx is done; a later Stop sees it end.
func TestScheduler_StopWaitsUntilCtx(t *testing.T) {
	fire := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return fire.Add(time.Minute) }
	running := store.ScheduleRun{Schedule: "s", FireTime: fire, Trigger: store.TriggerCron, SessionID: "ses_1", Status: store.RunRunning}
	runs := neverRan()
	runs.RunningRunsFunc = func(context.Context, string) ([]store.ScheduleRun, error) {
		return []store.ScheduleRun{running}, nil
	}
	release, reading := make(chan struct{}), make(chan struct{})
	var once sync.Once
	eng := &fakeEngine{
		CreateSessionFunc: func(context.Context, engine.NewSession) (engine.Session, bool, error) {
			return engine.Session{ID: "ses_1"}, false, nil
		},
		SendFunc: func(context.Context, string, engine.Input) (engine.Event, bool, error) {
			return engine.Event{Seq: 1}, true, nil
		},
		SessionFunc: func(context.Context, string) (engine.Session, error) {
			once.Do(func() { close(reading) })
			<-release // a read that does not heed its ctx
			return engine.Session{}, errors.New("released")
		},
	}
	s := newScheduler(t, eng, runs, now, config.ScheduleConfig{Name: "s", Cron: "0 9 * * *", Timezone: "UTC"})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-reading // the picked-up run's watcher is in the read
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Stop(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with a watcher still reading = %v, want the deadline", err)
	}
	close(release)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("Stop after the watcher ended: %v", err)
	}
}
