package bridge

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store/sqlite"
)

// newWatchable returns a real engine, unstarted, for its Watch: the
// Deliverer's catch-up marks sessions on it.
func newWatchable(t *testing.T) *engine.Engine {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(engine.Config{Store: st, Clock: fixedNow, NewID: func(p string) string { return p + "_1" }})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestDeliverer_CatchesUpOwnOriginFromCursor: at start the sessions of its
// origin are delivered from their saved cursors, and each saved move is
// kept; other origins' sessions are left alone.
func TestDeliverer_CatchesUpOwnOriginFromCursor(t *testing.T) {
	watched := newWatchable(t)
	sessions := map[string]engine.Session{
		"s1": {ID: "s1", Origin: engine.OriginSlack},
		"s2": {ID: "s2", Origin: engine.OriginSlack},
		"l1": {ID: "l1", Origin: engine.OriginLinear},
	}
	eng := &fakeEngine{
		WatchFunc: watched.Watch,
		SessionsFunc: func(context.Context, engine.SessionFilter) ([]engine.Session, error) {
			return []engine.Session{sessions["s1"], sessions["s2"], sessions["l1"]}, nil
		},
		SessionFunc: func(_ context.Context, id string) (engine.Session, error) { return sessions[id], nil },
		EventsFunc:  logUpTo(map[string]int64{"s1": 2, "s2": 42, "l1": 2}),
	}
	cursors := &memCursors{}
	_ = cursors.SetDeliveryCursor(context.Background(), fixedNow(), engine.OriginSlack, "s2", 40)
	var mu sync.Mutex
	from := map[string]int64{} // session -> the cursor its first event was rendered from
	d := Deliverer{
		Engine: eng, Store: cursors, Origin: engine.OriginSlack, Now: fixedNow, Log: discard(),
		Renderer: renderFunc(func(_ context.Context, s engine.Session, ev engine.Event) error {
			mu.Lock()
			defer mu.Unlock()
			if _, seen := from[s.ID]; !seen {
				from[s.ID] = ev.Seq - 1
			}
			return nil
		}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	waitFor(t, "both Slack sessions", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(from) == 2
	})
	cancel()
	<-done
	if from["s1"] != 0 || from["s2"] != 40 {
		t.Fatalf("delivered from %v, want s1 from 0 and s2 from 40", from)
	}
	for id, want := range map[string]int64{"s1": 2, "s2": 42} {
		if got, _ := cursors.DeliveryCursor(context.Background(), engine.OriginSlack, id); got != want {
			t.Fatalf("cursor of %s = %d, want %d", id, got, want)
		}
	}
	if got, _ := cursors.DeliveryCursor(context.Background(), engine.OriginLinear, "l1"); got != 0 {
		t.Fatalf("a Linear session's cursor moved to %d", got)
	}
}

// TestDeliverer_RetriesAFailedDelivery: a delivery that fails is tried
// again after a pause, from the cursor it reached: the cursor is saved
// after each rendered event, and the failed one is rendered again.
func TestDeliverer_RetriesAFailedDelivery(t *testing.T) {
	watched := newWatchable(t)
	s := engine.Session{ID: "s1", Origin: engine.OriginLinear}
	eng := &fakeEngine{
		WatchFunc:    watched.Watch,
		SessionsFunc: func(context.Context, engine.SessionFilter) ([]engine.Session, error) { return []engine.Session{s}, nil },
		SessionFunc:  func(context.Context, string) (engine.Session, error) { return s, nil },
		EventsFunc:   logUpTo(map[string]int64{"s1": 5}),
	}
	cursors := &memCursors{}
	var mu sync.Mutex
	var rendered []int64
	failed := false
	d := Deliverer{
		Engine: eng, Store: cursors, Origin: engine.OriginLinear, Now: fixedNow, Log: discard(),
		RetryPause: 200 * time.Millisecond,
		Renderer: renderFunc(func(_ context.Context, _ engine.Session, ev engine.Event) error {
			mu.Lock()
			defer mu.Unlock()
			rendered = append(rendered, ev.Seq)
			if ev.Seq == 4 && !failed {
				failed = true
				return errors.New("linear is down")
			}
			return nil
		}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	start := time.Now()
	waitFor(t, "the retry", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(rendered) == 6
	})
	cancel()
	<-done
	if want := []int64{1, 2, 3, 4, 4, 5}; !slices.Equal(rendered, want) {
		t.Fatalf("rendered %v, want %v: the retry from the saved cursor 3", rendered, want)
	}
	if got, _ := cursors.DeliveryCursor(context.Background(), engine.OriginLinear, "s1"); got != 5 {
		t.Fatalf("cursor %d, want 5", got)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Fatalf("retried after %s, want a pause", waited)
	}
}
