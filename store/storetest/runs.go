package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func testRun(schedule string, fire time.Time) store.ScheduleRun {
	return store.ScheduleRun{Schedule: schedule, FireTime: fire, Status: store.RunRunning, UpdatedAt: T0}
}

func claim(tb testing.TB, st store.Runs, r store.ScheduleRun) bool {
	tb.Helper()
	ok, err := st.ClaimRun(context.Background(), r)
	if err != nil {
		tb.Fatalf("ClaimRun(%s %s): %v", r.Schedule, r.FireTime, err)
	}
	return ok
}

func testClaimRunOnce(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	fire := T0.Add(time.Hour)
	if !claim(t, st, testRun("digest", fire)) {
		t.Fatal("first claim lost")
	}
	again := testRun("digest", fire.In(time.UTC)) // the same instant in another zone
	again.Status = store.RunSkipped
	if claim(t, st, again) {
		t.Fatal("second claim of the same fire time won")
	}
	if !claim(t, st, testRun("other", fire)) {
		t.Fatal("another schedule's claim of the same time lost")
	}
	got, err := st.LastRun(ctx, "digest")
	if err != nil {
		t.Fatal(err)
	}
	want := store.ScheduleRun{Schedule: "digest", FireTime: fire.UTC(), Trigger: store.TriggerCron,
		Status: store.RunRunning, CreatedAt: T0.UTC(), UpdatedAt: T0.UTC()}
	if got != want {
		t.Fatalf("LastRun = %+v, want %+v (the loser changed nothing)", got, want)
	}
}

// testClaimRunAcrossProcesses has two handles on one database (as two
// brain processes would) race for the same fire times: each is claimed once.
func testClaimRunAcrossProcesses(t *testing.T, open func() store.Store) {
	stores := [2]store.Store{open(), open()}
	const fires, racers = 20, 8
	wins := make([]int, fires)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := stores[i%2]
			for f := range fires {
				ok, err := st.ClaimRun(context.Background(), testRun("digest", T0.Add(time.Duration(f)*time.Minute)))
				if err != nil {
					t.Errorf("ClaimRun: %v", err)
					return
				}
				if ok {
					mu.Lock()
					wins[f]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for f, n := range wins {
		if n != 1 {
			t.Errorf("fire %d claimed %d times, want 1", f, n)
		}
	}
	runs, err := stores[1].Runs(context.Background(), "digest", 0)
	if err != nil || len(runs) != fires {
		t.Fatalf("Runs = %d, %v; want %d", len(runs), err, fires)
	}
}

func testUpdateAndFinishRun(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	st := stores[0]
	r := testRun("digest", T0)
	r.Trigger = store.TriggerManual
	claim(t, st, r)

	r.SessionID, r.UpdatedAt = "ses_1", T0.Add(time.Second)
	if err := st.UpdateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	done := r
	done.Status, done.Outcome, done.UpdatedAt = store.RunCompleted, "All good.", T0.Add(time.Minute)
	// Two watchers (two processes) finish the same run: one records it.
	first, err := st.FinishRun(ctx, done)
	if err != nil || !first {
		t.Fatalf("FinishRun = %v, %v; want true", first, err)
	}
	late := done
	late.Status, late.Outcome = store.RunInterrupted, "late"
	second, err := stores[1].FinishRun(ctx, late)
	if err != nil || second {
		t.Fatalf("second FinishRun = %v, %v; want false", second, err)
	}
	got, err := stores[1].LastRun(ctx, "digest")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunCompleted || got.Outcome != "All good." || got.SessionID != "ses_1" ||
		got.Trigger != store.TriggerManual || !got.UpdatedAt.Equal(T0.Add(time.Minute)) || !got.CreatedAt.Equal(T0) {
		t.Fatalf("run after finish: %+v", got)
	}

	missing := testRun("digest", T0.Add(time.Hour))
	if err := st.UpdateRun(ctx, missing); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("UpdateRun of an unclaimed run = %v, want not found", err)
	}
	if _, err := st.FinishRun(ctx, missing); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("FinishRun of an unclaimed run = %v, want not found", err)
	}
}

func testRunsNewestFirstAndRunning(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	if _, err := st.LastRun(ctx, "digest"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("LastRun of a schedule that never ran = %v, want not found", err)
	}
	// Claimed out of order, with fire times whose text would sort wrongly
	// in their own zones.
	zone := time.FixedZone("west", -11*3600)
	for _, h := range []int{3, 1, 4, 2} {
		r := testRun("digest", T0.Add(time.Duration(h)*time.Hour).In(zone))
		if h%2 == 0 {
			r.Status = store.RunCompleted
		}
		claim(t, st, r)
	}
	claim(t, st, testRun("other", T0))

	runs, err := st.Runs(ctx, "digest", 3)
	if err != nil {
		t.Fatal(err)
	}
	var hours []int
	for _, r := range runs {
		hours = append(hours, int(r.FireTime.Sub(T0)/time.Hour))
	}
	if fmt.Sprint(hours) != "[4 3 2]" {
		t.Fatalf("Runs(limit 3) hours = %v, want [4 3 2]", hours)
	}
	running, err := st.RunningRuns(ctx, "digest")
	if err != nil {
		t.Fatal(err)
	}
	if len(running) != 2 || !running[0].FireTime.Equal(T0.Add(time.Hour)) || !running[1].FireTime.Equal(T0.Add(3*time.Hour)) {
		t.Fatalf("RunningRuns(digest) = %+v, want hours 1 and 3", running)
	}
	all, err := st.RunningRuns(ctx, "")
	if err != nil || len(all) != 3 || all[0].Schedule != "other" {
		t.Fatalf("RunningRuns(all) = %+v, %v; want 3, other first", all, err)
	}
}

func testClaimRunValidates(t *testing.T, open func() store.Store) {
	st := open()
	bad := []store.ScheduleRun{
		{FireTime: T0, Status: store.RunRunning, UpdatedAt: T0},
		{Schedule: "x", Status: store.RunRunning, UpdatedAt: T0},
		{Schedule: "x", FireTime: T0, Status: "pending", UpdatedAt: T0},
		{Schedule: "x", FireTime: T0, Status: store.RunRunning},
		{Schedule: "x", FireTime: T0, Status: store.RunRunning, UpdatedAt: T0, Trigger: "webhook"},
	}
	for _, r := range bad {
		if _, err := st.ClaimRun(context.Background(), r); !errors.Is(err, engine.ErrInvariant) {
			t.Errorf("ClaimRun(%+v) = %v, want an invariant error", r, err)
		}
	}
}
