package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/anthropic"
	"brain/engine/model/fakemodel"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
)

// TestOutage_RestartDuring200Turns (issue 24, finding 9): PostgreSQL is
// stopped for 4 s (immediate shutdown: every connection cut) and started
// again while 200 turns run on 20 sessions; every acknowledged input is
// answered and none is cancelled (input_cancelled): turns wait the outage
// out instead of failing.
func TestOutage_RestartDuring200Turns(t *testing.T) {
	pgtest.Shared(t) // skips (or fails when required) without PostgreSQL
	ctx := context.Background()
	// A server of this test's own (the others' stay up), which acknowledges
	// a commit only once its WAL is written: with Start's
	// synchronous_commit=off the immediate shutdown lost the last
	// acknowledged inputs (a session's input 3 vanished from its log and
	// was never answered), a loss a real server does not make.
	srv, err := pgtest.StartDurable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	_, dsn, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	m, err := anthropic.New(anthropic.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake", MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	var ids atomic.Int64
	log := &logBuffer{}
	eng, err := engine.New(engine.Config{
		Store:       st,
		Agents:      []*engine.Agent{{Name: "default", Model: m, Instructions: "You are a test agent."}},
		Logger:      slog.New(slog.NewTextHandler(log, nil)),
		Clock:       time.Now,
		NewID:       func(p string) string { return fmt.Sprintf("%s_%06d", p, ids.Add(1)) },
		Leases:      st,
		Replica:     "r1",
		OutageGrace: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = eng.Stop(sctx)
		_ = st.Close()
	})

	const sessions, perSession = 20, 10
	var done atomic.Int64
	errs := make(chan error, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runInputs(ctx, eng, i, perSession, &done)
		}()
	}
	// The outage, once a quarter of the turns are done.
	for done.Load() < sessions*perSession/4 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.Restart(ctx, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	restartedAt := done.Load()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if restartedAt >= sessions*perSession {
		t.Fatalf("every turn ended before the outage (%d): nothing was tested", restartedAt)
	}
	cancelled, failed := 0, 0
	list, err := eng.Sessions(ctx, engine.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		evs, err := eng.Events(ctx, s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type != engine.EventSessionError {
				continue
			}
			p, _ := ev.Decode()
			if p.(engine.SessionError).Code == engine.CodeInputCancelled {
				cancelled++
			} else {
				failed++
			}
		}
	}
	t.Logf("200 turns, PostgreSQL down 4 s after %d of them: %d inputs cancelled, %d errors", restartedAt, cancelled, failed)
	if cancelled != 0 || failed != 0 {
		t.Errorf("%d inputs cancelled and %d session errors (want 0); log:\n%s", cancelled, failed, log.String())
	}
}

// runInputs sends n inputs to a new session one after the other, each once
// the previous one's turn completed, and checks each was answered.
func runInputs(ctx context.Context, eng *engine.Engine, i, n int, done *atomic.Int64) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	s, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "default", Interactive: true, StartedBy: "tester"})
	if err != nil {
		return fmt.Errorf("session %d: %w", i, err)
	}
	for k := range n {
		// An input the engine refused was not acknowledged: send it again
		// (the test's side; the engine's reads and commits wait by
		// themselves).
		for {
			_, _, err := eng.Send(ctx, s.ID, engine.Input{Text: fmt.Sprintf("s%d-%d", i, k)})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("session %d input %d: %w", i, k, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for {
			changed := eng.Changed(s.ID)
			evs, err := eng.Events(ctx, s.ID, 0, 0)
			if err == nil && countType(evs, engine.EventTurnCompleted) > k {
				break
			}
			select {
			case <-changed:
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return fmt.Errorf("session %d input %d not answered: %s", i, k, dumpEvents(evs))
			}
		}
		done.Add(1)
	}
	return nil
}
