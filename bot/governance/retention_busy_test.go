package governance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/governance"
	"brain/engine"
	"brain/store"
	"brain/store/storetest"
)

// limits records the batch sizes the job asks for.
type limits struct {
	store.Store
	asked []int
}

func (l *limits) PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error) {
	l.asked = append(l.asked, limit)
	return l.Store.PruneSessions(ctx, before, limit)
}

// TestRetention_WhileTurnsRunSmallStepsStillFinish: while turns run all
// the time the job never sees a gap, yet it deletes everything expired,
// in batches of at most a quarter of the configured 500; with no turn
// running the batches grow past the smallest (20).
func TestRetention_WhileTurnsRunSmallStepsStillFinish(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		running int
		small   bool
	}{{"busy", 3, true}, {"idle", 0, false}} {
		t.Run(c.name, func(t *testing.T) {
			st := openSQLite(t)
			now := t0.Add(100 * 24 * time.Hour)
			for i := range 4 {
				id := fmt.Sprintf("s%d", i)
				storetest.CreateSession(t, st, storetest.Session(id, t0))
				var evs []engine.Event
				for j := range 150 {
					evs = append(evs, engine.Event{ID: storetest.EventID(id, j), Type: engine.EventUserMessage, Data: json.RawMessage(`{"text":"hello"}`)})
				}
				storetest.Commit(t, st, engine.Commit{SessionID: id, Now: t0, Events: evs})
			}
			l := &limits{Store: st}
			asked := 0
			job := &governance.Retention{Store: l, Sessions: 90 * 24 * time.Hour, Every: time.Hour, Batch: 500,
				// Duty 1: no rest, so the test does not wait; the turns
				// never stop, so no gap comes either.
				Duty: 1, Turns: func() int { asked++; return c.running },
				Trail: &audit.Recorder{Store: st, Now: func() time.Time { return now }}, Now: func() time.Time { return now }}
			if err := job.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			left, _, err := st.ListSessions(ctx, store.SessionQuery{Limit: 10})
			if err != nil || len(left) != 0 {
				t.Fatalf("sessions left = %d, %v; want none", len(left), err)
			}
			biggest := 0
			for _, n := range l.asked {
				biggest = max(biggest, n)
			}
			if c.small && biggest > 500/4 {
				t.Errorf("while turns run the job asked for batches up to %d (%v), want at most 125 each", biggest, l.asked)
			}
			if !c.small && biggest <= 20 {
				t.Errorf("with no turn running the batches stayed at %d, want them to grow", biggest)
			}
			if asked == 0 {
				t.Error("the job never asked how many turns run")
			}
		})
	}
}
