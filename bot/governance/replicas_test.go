package governance_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/config"
	"brain/bot/governance"
	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// inFlight wraps the budgets to count model calls between their check and
// their record: the calls a budget may not yet see.
type inFlight struct {
	*governance.Budgets
	now, max atomic.Int64
}

func (f *inFlight) Allow(ctx context.Context, c engine.SpendCall) (string, error) {
	n, err := f.Budgets.Allow(ctx, c)
	if err == nil {
		cur := f.now.Add(1)
		for m := f.max.Load(); cur > m && !f.max.CompareAndSwap(m, cur); m = f.max.Load() {
		}
	}
	return n, err
}

func (f *inFlight) Spent(ctx context.Context, c engine.SpendCall, u engine.Usage) error {
	defer f.now.Add(-1)
	return f.Budgets.Spent(ctx, c, u)
}

// TestBudgets_TwoReplicas: two engines on one PostgreSQL (two store
// handles, as two replicas) run 20 turns of one person at once against a
// daily budget of 1000 tokens (five calls of 200). The bound: every call
// allowed saw less than the limit recorded, so the total spent is under
// the limit plus one call's spend for each call in flight (checked, not
// yet recorded) at the worst moment: < 1000 + 200 x max in flight.
func TestBudgets_TwoReplicas(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	limits := []config.BudgetConfig{{Scope: "person", Period: "day", Tokens: 1000}}
	var (
		engines [2]*engine.Engine
		spends  [2]*inFlight
		stores  [2]store.Store
		models  [2]*model
	)
	for i := range engines {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		var mu sync.Mutex
		now := t0
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Millisecond); return now }
		var ids atomic.Int64
		b := &governance.Budgets{Store: st, Limits: limits, Audit: &audit.Recorder{Store: st, Now: clock}, Now: clock}
		spends[i], stores[i], models[i] = &inFlight{Budgets: b}, st, &model{}
		e, err := engine.New(engine.Config{
			Store: st, Agents: []*engine.Agent{{Name: "default", Model: models[i]}},
			Clock: clock, NewID: func(p string) string { return fmt.Sprintf("%s_r%d_%d", p, i, ids.Add(1)) },
			Spend: spends[i], Leases: st, Peers: st, Replica: fmt.Sprintf("r%d", i),
			PollInterval: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Stop(context.Background()) })
		engines[i] = e
	}

	const turns = 20
	ids := make([]string, turns)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range turns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, _, _, err := engines[i%2].CreateSessionWithInput(ctx,
				engine.NewSession{Agent: "default", Origin: engine.OriginAPI, Interactive: true, StartedBy: "U1"},
				engine.Input{Text: fmt.Sprintf("turn %d", i)})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = s.ID
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	stopped := 0
	for i, id := range ids {
		if s := settle(t, engines[i%2], id); s.Status == engine.StatusInterrupted {
			stopped++
		}
	}
	calls := models[0].calls.Load() + models[1].calls.Load()
	tokens, _, err := stores[0].SpentSince(ctx, store.SpendPerson, "U1", t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	maxInFlight := spends[0].max.Load() + spends[1].max.Load()
	bound := 1000 + 200*maxInFlight
	t.Logf("%d calls, %d stopped, %d tokens spent, at most %d calls in flight (summed over replicas): bound %d", calls, stopped, tokens, maxInFlight, bound)
	if tokens != calls*200 {
		t.Errorf("spend recorded %d tokens for %d calls, want %d", tokens, calls, calls*200)
	}
	if tokens < 1000 {
		t.Errorf("spent %d: the budget stopped turns before it was used up", tokens)
	}
	if tokens >= bound {
		t.Errorf("spent %d, over the bound %d", tokens, bound)
	}
	if int64(stopped)+calls != turns {
		t.Errorf("%d stopped + %d ran = %d, want every one of %d turns accounted for", stopped, calls, int64(stopped)+calls, turns)
	}
}
