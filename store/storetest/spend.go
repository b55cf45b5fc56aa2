package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"brain/store"
)

// testSpend: spend sums per scope and since a time, across handles;
// limits replace each other per budget; a notice is marked once.
func testSpend(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	a, b := open(), open()
	recs := []store.SpendRecord{
		{At: T0, SessionID: "s1", Person: "U1", Channel: "slack:T:C1", Agent: "default", Tokens: 100, Cost: 0.5},
		{At: T0.Add(time.Hour), SessionID: "s2", Person: "U1", Agent: "default", Tokens: 50, Cost: 0.25},
		{At: T0.Add(time.Hour), SessionID: "s3", Person: "U2", Channel: "slack:T:C1", Schedule: "digest", Tokens: 7, Cost: 0},
	}
	for i, r := range recs {
		if err := []store.Store{a, b}[i%2].RecordSpend(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		scope, subject string
		since          time.Time
		tokens         int64
		cost           float64
	}{
		{store.SpendPerson, "U1", T0, 150, 0.75},
		{store.SpendPerson, "U1", T0.Add(time.Minute), 50, 0.25},
		{store.SpendChannel, "slack:T:C1", T0, 107, 0.5},
		{store.SpendAgent, "default", T0, 150, 0.75},
		{store.SpendSchedule, "digest", T0, 7, 0},
		{store.SpendPerson, "U9", T0, 0, 0},
	} {
		tok, cost, err := b.SpentSince(ctx, tc.scope, tc.subject, tc.since)
		if err != nil || tok != tc.tokens || cost != tc.cost {
			t.Errorf("SpentSince(%s %s) = %d, %v, %v; want %d, %v", tc.scope, tc.subject, tok, cost, err, tc.tokens, tc.cost)
		}
	}
	if _, _, err := a.SpentSince(ctx, "session_id; DROP TABLE spend", "x", T0); err == nil {
		t.Error("SpentSince of an unknown scope succeeded")
	}

	l := store.BudgetLimit{Scope: "person", Subject: "U1", Period: "day", Tokens: 1000, SetBy: "U0", Reason: "launch", SetAt: T0}
	if err := a.SetBudgetLimit(ctx, l); err != nil {
		t.Fatal(err)
	}
	l.Tokens, l.Reason = 2000, "more"
	if err := b.SetBudgetLimit(ctx, l); err != nil {
		t.Fatal(err)
	}
	ls, err := a.BudgetLimits(ctx)
	if err != nil || len(ls) != 1 || ls[0].Tokens != 2000 || ls[0].Reason != "more" || !ls[0].SetAt.Equal(T0) {
		t.Errorf("BudgetLimits = %+v, %v; want the one raised to 2000", ls, err)
	}

	var wg sync.WaitGroup
	firsts := make([]bool, 10)
	for i := range firsts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first, err := []store.Store{a, b}[i%2].MarkNotice(ctx, "person/U1/day/2025-03-14", T0)
			if err != nil {
				t.Error(err)
			}
			firsts[i] = first
		}()
	}
	wg.Wait()
	n := 0
	for _, f := range firsts {
		if f {
			n++
		}
	}
	if n != 1 {
		t.Errorf("MarkNotice first %d times, want once", n)
	}
	if pruned, err := a.PruneSpend(ctx, T0.Add(time.Minute), 10); err != nil || pruned != 1 {
		t.Errorf("PruneSpend = %d, %v; want 1", pruned, err)
	}
}
