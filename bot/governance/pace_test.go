package governance

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestPace_SizesStepsByTime: steps start small, grow at most twofold while
// they stay inside the budget, shrink in proportion when one took too long
// (a loaded machine), stay within their bounds, and the rest after each
// step is three times as long as the step.
func TestPace_SizesStepsByTime(t *testing.T) {
	p := newPace(10*time.Millisecond, 10, 500, 0)
	steps := []struct {
		n        int
		took     time.Duration
		wantNext int
	}{
		{10, time.Millisecond, 20},        // quick: doubles
		{20, time.Millisecond, 40},        // still quick: doubles again, not 200
		{40, 2 * time.Millisecond, 80},    // doubling is below the budget's 200
		{80, 8 * time.Millisecond, 100},   // 80 in 8 ms: the budget holds 100
		{100, 50 * time.Millisecond, 20},  // the machine got slow: 5x smaller
		{20, time.Second, 10},             // never below min
		{5, 0, 20},                        // an unmeasurably quick step (cut short): doubles
		{0, 30 * time.Millisecond, 20},    // nothing done: no news of the rate, size kept
		{20, 100 * time.Microsecond, 40},  // quick again
		{40, 10 * time.Microsecond, 80},   //
		{80, 10 * time.Microsecond, 160},  //
		{160, 10 * time.Microsecond, 320}, //
		{320, 10 * time.Microsecond, 500}, // never above max
		{500, 10 * time.Millisecond, 500}, // on budget
		{500, 20 * time.Millisecond, 250}, // twice the budget: half
		{250, -time.Millisecond, 500},     // a clock step back counts as quick
	}
	if got := p.next(false); got != 10 {
		t.Fatalf("first step = %d, want the minimum 10", got)
	}
	for i, s := range steps {
		rest := p.took(s.n, s.took, false)
		if want := 3 * max(s.took, 0); rest != want {
			t.Errorf("step %d: rest = %v, want %v (three times the step)", i, rest, want)
		}
		if got := p.next(false); got != s.wantNext {
			t.Errorf("step %d (%d in %v): next = %d, want %d", i, s.n, s.took, got, s.wantNext)
		}
	}
}

// TestPace_Bounds: a maximum below the minimum wins (retention.batch: 4
// means batches of 4), and zero or negative bounds still give steps of 1.
func TestPace_Bounds(t *testing.T) {
	p := newPace(time.Millisecond, 50, 4, 0)
	for range 3 {
		if got := p.next(false); got != 4 {
			t.Fatalf("next = %d, want 4 (the maximum)", got)
		}
		p.took(4, time.Hour, false)
	}
	q := newPace(time.Millisecond, 0, 0, 0)
	q.took(1, time.Hour, false)
	if got := q.next(false); got != 1 {
		t.Errorf("next with no bounds = %d, want 1", got)
	}
}

// TestPace_BusyRestsLongerInSmallSteps: while turns run the job works at
// its duty (a tenth by default: it rests nine times as long as a step
// took) in a quarter of the measured step (never below the minimum), and
// what the steps measured is kept for when the turns stop; a duty
// outside (0, 1] is the default.
func TestPace_BusyRestsLongerInSmallSteps(t *testing.T) {
	p := newPace(10*time.Millisecond, 10, 500, 0)
	if rest := p.took(10, time.Millisecond, true); rest != 9*time.Millisecond {
		t.Errorf("busy rest at the default duty = %v, want 9ms", rest)
	}
	if got := p.next(true); got != 10 {
		t.Errorf("busy next = %d, want the minimum 10", got)
	}
	if got := p.next(false); got != 20 {
		t.Errorf("idle next after a quick step = %d, want 20 (the busy step still measured)", got)
	}
	if rest := p.took(20, 2*time.Millisecond, false); rest != 6*time.Millisecond {
		t.Errorf("idle rest = %v, want 6ms (three times the step)", rest)
	}
	for range 5 {
		p.took(p.next(false), 100*time.Microsecond, false) // quick: 40, 80, 160, 320, then the maximum 500
	}
	if got := p.next(true); got != 125 {
		t.Errorf("busy next after the steps grew to 500 = %d, want a quarter, 125", got)
	}
	for _, c := range []struct {
		duty float64
		want time.Duration
	}{{0.5, 4 * time.Millisecond}, {0.2, 16 * time.Millisecond}, {1, 0}, {-1, 36 * time.Millisecond}, {2, 36 * time.Millisecond}} {
		q := newPace(10*time.Millisecond, 10, 500, c.duty)
		if rest := q.took(10, 4*time.Millisecond, true); rest != c.want {
			t.Errorf("duty %v: busy rest after 4ms = %v, want %v", c.duty, rest, c.want)
		}
	}
}

// TestWaitGap: the job waiting for a gap between turns goes on once no
// turn runs, goes on anyway (busy) when its wait runs out or it is
// stopped, and does not wait at all when no turn runs or it has no
// engine to ask.
func TestWaitGap(t *testing.T) {
	ctx := context.Background()
	var asked atomic.Int32
	r := &Retention{Turns: func() int {
		if asked.Add(1) < 4 {
			return 2
		}
		return 0
	}}
	if r.waitGap(ctx, time.Hour) {
		t.Error("waitGap = busy, want a gap (the turns ended)")
	}
	if n := asked.Load(); n != 4 {
		t.Errorf("asked %d times, want 4 (until none ran)", n)
	}
	always := &Retention{Turns: func() int { return 1 }}
	if !always.waitGap(ctx, 5*time.Millisecond) {
		t.Error("waitGap with turns always running = gap, want busy once the wait ran out")
	}
	if !always.waitGap(ctx, 0) {
		t.Error("waitGap(0) with turns running = gap, want busy")
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if !always.waitGap(stopped, time.Hour) {
		t.Error("waitGap on a stopped job = gap, want busy (it returns at once)")
	}
	if (&Retention{}).waitGap(ctx, time.Hour) {
		t.Error("waitGap with no engine = busy, want a gap")
	}
	if (&Retention{Turns: func() int { return 0 }}).waitGap(ctx, time.Hour) {
		t.Error("waitGap with no turn running = busy")
	}
}
