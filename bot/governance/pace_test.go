package governance

import (
	"testing"
	"time"
)

// TestPace_SizesStepsByTime: steps start small, grow at most twofold while
// they stay inside the budget, shrink in proportion when one took too long
// (a loaded machine), stay within their bounds, and the rest after each
// step is three times as long as the step.
func TestPace_SizesStepsByTime(t *testing.T) {
	p := newPace(10*time.Millisecond, 10, 500)
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
	if got := p.next(); got != 10 {
		t.Fatalf("first step = %d, want the minimum 10", got)
	}
	for i, s := range steps {
		rest := p.took(s.n, s.took)
		if want := 3 * max(s.took, 0); rest != want {
			t.Errorf("step %d: rest = %v, want %v (three times the step)", i, rest, want)
		}
		if got := p.next(); got != s.wantNext {
			t.Errorf("step %d (%d in %v): next = %d, want %d", i, s.n, s.took, got, s.wantNext)
		}
	}
}

// TestPace_Bounds: a maximum below the minimum wins (retention.batch: 4
// means batches of 4), and zero or negative bounds still give steps of 1.
func TestPace_Bounds(t *testing.T) {
	p := newPace(time.Millisecond, 50, 4)
	for range 3 {
		if got := p.next(); got != 4 {
			t.Fatalf("next = %d, want 4 (the maximum)", got)
		}
		p.took(4, time.Hour)
	}
	q := newPace(time.Millisecond, 0, 0)
	q.took(1, time.Hour)
	if got := q.next(); got != 1 {
		t.Errorf("next with no bounds = %d, want 1", got)
	}
}
